"""``load(game_id, credential=…)``: a store refuses a wrong credential as it refuses an unknown id
(issue 28), and every store (the memory store, Redis's LOAD script through the lean connection
and through redis-py) reads the access record's credentials alike (``store.credentials``)."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from accordion.store import GameNotFound, GameRecord, GameStore, MemoryStore
from accordion.store.credentials import holds
from accordion.store.redis import RedisStore
from accordion.store.redis_exec import Executor
from accordion.store.redis_scripts import LOAD


def h(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


PLAY, WATCH, WRONG = h("play"), h("watch"), h("wrong")
# Every form of token hash a game may hold: the play hash alone (earlier versions), the access
# record (with and without a deal code), and records no version wrote (which open nothing).
RECORDS = {
    "legacy": PLAY,
    "access": b"\x01" + PLAY + WATCH + b"\x00",
    "coded": b"\x01" + PLAY + WATCH + b"\x03" + b"ABCDEFGHJKMNPQRS",
    "bad-tag": b"\x02" + PLAY + WATCH + b"\x00",
    "short": PLAY[:31],
    "empty": b"",
}
CREDENTIALS = {"play": PLAY, "watch": WATCH, "wrong": WRONG, "prefix": PLAY[:31], "longer": PLAY + b"\x00"}


@pytest.fixture(params=["memory", "redis-lean", "redis-py"])
async def any_store(request: pytest.FixtureRequest) -> AsyncIterator[GameStore]:
    store: GameStore
    if request.param == "memory":
        store = MemoryStore()
    else:
        url = str(request.getfixturevalue("redis_url"))
        if request.param == "redis-lean":
            store = RedisStore.from_url(url)
        else:  # the executor of TLS, sentinel and option-laden URLs: the script through redis-py
            store = RedisStore(Executor(Redis.from_url(url), Redis.from_url(url), watch_block=1.0))
    try:
        yield store
    finally:
        await store.close()


async def opens(store: GameStore, game_id: str, credential: bytes) -> bool:
    try:
        record = await store.load(game_id, credential=credential)
    except GameNotFound:
        return False
    assert record.game_id == game_id and record.version == 3 and record.data == b"game " + game_id.encode()
    return True


async def test_a_game_opens_for_its_play_and_watch_hashes_only(any_store: GameStore) -> None:
    for name, token_hash in RECORDS.items():
        await any_store.create(GameRecord(name, 3, token_hash, b"game " + name.encode()), ttl=60)
    opened = {
        (name, c): await opens(any_store, name, credential)
        for name in RECORDS
        for c, credential in CREDENTIALS.items()
    }
    assert {key for key, ok in opened.items() if ok} == {
        ("legacy", "play"),
        ("access", "play"),
        ("access", "watch"),
        ("coded", "play"),
        ("coded", "watch"),
    }
    # The Lua copy and the memory store read the layout as ``credentials.holds`` does.
    assert opened == {(n, c): holds(RECORDS[n], CREDENTIALS[c]) for n, c in opened}
    for name in RECORDS:  # without a credential: the record, whoever asks (watch, replay)
        assert (await any_store.load(name)).token_hash == RECORDS[name]
    with pytest.raises(GameNotFound):
        await any_store.load("unknown", credential=PLAY)


async def test_redis_answers_a_wrong_credential_as_an_unknown_id(redis_url: str) -> None:
    """The same reply, so nothing in this process differs: the script's nil, not the game."""
    store = RedisStore.from_url(redis_url)
    client = Redis.from_url(redis_url)
    try:
        await store.create(GameRecord("g" * 22, 3, RECORDS["coded"], b"the game"), ttl=60)
        await store.load("g" * 22, credential=PLAY)  # (the script is loaded now)
        key, unknown = store.game_keys("g" * 22)[0], store.game_keys("u" * 22)[0]
        existing = await client.evalsha(LOAD.sha, 1, key, WRONG)
        absent = await client.evalsha(LOAD.sha, 1, unknown, WRONG)
        assert existing is None and absent is None
        assert await client.evalsha(LOAD.sha, 1, key, WATCH) == [b"3", RECORDS["coded"], b"the game"]
    finally:
        await client.aclose()
        await store.close()
