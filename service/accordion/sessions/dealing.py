"""NewGame, deal codes and ShareGame: storing a new game with its token, watch token and
deal code, replaying NewGame's first answer to a retry, reading a deal code, sharing a game."""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from accordion import engine
from accordion import store as st
from accordion.engine import Game
from accordion.engine.core import option_text

from . import replies, tokens
from .cache import Cached
from .errors import DealCodeNotFound, DealCodeOptions, GameCorrupt, RequestIdReused, StoreUnavailable
from .record import Stored, decode_head, load_stored
from .seed_gate import shown_seeds_tried
from .store_calls import StoreCalls

FIRST_VERSION = 1
_DEAL_CODE_FORMAT = b"\x01"  # a deal code's record: this byte, then the game's replay header
MAX_ATTEMPTS = 3  # a mutation without expected_version is retried this often on a lost race


@dataclass(frozen=True, slots=True)
class Dealt:
    """A new game (or, for a retry, the first game of its request id, as dealt), with its watch
    token and its deal code (shown with dashes; "" for a game that has none)."""

    game_id: str
    token: str
    game: Game
    seeds_tried: int
    watch_token: str = ""
    deal_code: str = ""


@dataclass(frozen=True, slots=True)
class Shared:
    """ShareGame's answer: the deal code (shown with dashes) and the current watch token."""

    deal_code: str
    watch_token: str


@dataclass(frozen=True, slots=True)
class CodedDeal:
    """What a deal code names: the variant, its option values, the seed and the explicit deal
    (None: dealt from the seed), and the code (canonical)."""

    variant: engine.Variant
    options: dict[str, engine.OptionValue]  # the variant's option values
    seed: int
    deal: tuple[int, ...] | None
    code: str

    def game(self, variant: str, options: dict[str, str]) -> tuple[Game, bool]:
        """The game the code deals, with ``options`` asked for over the code's, and whether it
        is the code's game exactly (then it keeps the code). Raises DealCodeOptions for a
        variant other than the code's, or an option other than the code's value (``open``
        would show what the code's deal hides; any other changes the game), except an ``undo``
        at least as strict; InvalidOptionError for an option the variant does not have."""
        if variant and engine.find_variant(variant).id != self.variant.id:
            raise DealCodeOptions(f"this deal code deals {self.variant.id}, not {variant}")
        asked = self.variant.resolve(options)
        values = dict(self.options)
        for name in sorted(options):
            value, coded = asked[name], self.options.get(name)
            if value == coded:
                continue
            if name == "undo" and engine.undo_is_stricter(str(value), str(coded)):
                values[name] = value
                continue
            raise DealCodeOptions(
                f"option {name}: a deal code deals its game with its own options "
                f"(here {name}={option_text(coded)}); only a stricter undo may be asked for"
            )
        game = engine.new_game(self.variant, values, seed=self.seed, deal=self.deal)
        return game, values == self.options


@dataclass(frozen=True, slots=True)
class RecordedNewGame:
    """The first NewGame answer to a request id as an earlier version recorded it: the
    serialized reply without its token, and the token."""

    reply: bytes
    token: str


class Dealing(StoreCalls):
    """The flow's NewGame and ShareGame (``flow.Sessions`` is the whole flow)."""

    # --- NewGame -----------------------------------------------------------------------------
    async def deal(
        self,
        game: Game,
        deadline: float | None,
        *,
        seeds_tried: int = 0,
        request_id: str = "",
        fingerprint: bytes = b"",
        caller: str = "",
        deal_code: str = "",
    ) -> Dealt | RecordedNewGame:
        """Store a new game under a fresh id and token, with its watch token and a deal code
        (``deal_code``: the game is that code's game exactly, so it keeps it; else a new code).
        With a request id, a retry (same id, same ``fingerprint``, same ``caller``) gets the
        first game and token; the same id for another request is RequestIdReused; under another
        caller it is another id. ``seeds_tried`` (NewGame(winnable_only)'s count) is kept and
        answered only where the seed shows (``seed_gate.shown_seeds_tried``), since it names it."""
        seeds_tried = shown_seeds_tried(game, seeds_tried)
        token = tokens.new_token()
        stored = Stored.new(game, FIRST_VERSION)
        # The code's record is written first: a game never names a code that does not answer
        # (if the game is not created after all, the code deals a game nobody played: harmless).
        code = deal_code or await self._new_deal_code(stored.head, deadline)
        access = tokens.Access.for_token(token, 0, code)
        token_hash = access.dump()
        game_id = await self._create(stored.dump(), token_hash, deadline)
        if request_id:
            record = replies.new_game_record(tokens.seal_token(token, request_id), seeds_tried, game_id)
            key = tokens.new_game_key(request_id, caller)
            claim = self.store.claim_request(key, fingerprint, record, ttl=self.game_ttl)
            prior = await self._timed("claim_request", "", deadline, claim)
            if prior is not None:  # a retry, or a lost race: the first game stands and ours goes
                await self._timed("delete", game_id, deadline, self.store.delete(game_id))
                if not hmac.compare_digest(prior.fingerprint, fingerprint):
                    raise RequestIdReused()
                return await self._first_deal(prior.reply, request_id, deadline)
        # The first move will find it decoded (cached only now: no await until the caller reads ``game``).
        self.cache.put(game_id, Cached(FIRST_VERSION, token_hash, stored))
        self.observer.dealt(game.variant.id)
        return Dealt(
            game_id, token, game, seeds_tried, tokens.watch_token(token, 0), tokens.show_deal_code(code)
        )

    async def _new_deal_code(self, head: bytes, deadline: float | None) -> str:
        """A fresh deal code, its record (the game's replay header) stored for ``deal_code_ttl``."""
        for _attempt in range(MAX_ATTEMPTS):
            code = tokens.new_deal_code()
            put = self.store.put_named(
                tokens.deal_code_key(code), _DEAL_CODE_FORMAT + head, ttl=self.deal_code_ttl
            )
            if await self._timed("put_named", "", deadline, put):
                return code
        raise StoreUnavailable("put_named")  # 80 random bits taken three times: not by chance

    async def find_deal(self, text: str, deadline: float | None) -> CodedDeal:
        """What a deal code (as a person typed it) deals. Raises DealCodeNotFound."""
        code = tokens.read_deal_code(text)
        if code is None:
            raise DealCodeNotFound()
        blob = await self._timed("get_named", "", deadline, self.store.get_named(tokens.deal_code_key(code)))
        if blob is None or blob[:1] != _DEAL_CODE_FORMAT:
            raise DealCodeNotFound()
        try:
            variant, rules, seed, deal = decode_head(blob[1:])
        except (ValueError, KeyError, IndexError) as exc:  # EngineError is a ValueError
            raise DealCodeNotFound() from exc
        return CodedDeal(variant, dict(rules.values), seed, deal, code)

    # --- ShareGame -------------------------------------------------------------------------
    async def share(
        self, game_id: str, token: str, deadline: float | None, *, rotate: bool = False
    ) -> Shared:
        """The game's deal code and watch token, for the player (the play token; the watch token
        is WatchOnly). ``rotate``: a new watch token (the next generation); the old one stops
        opening the game, and streams watching with it end. A game stored before watch tokens
        and deal codes existed gets both here."""
        for _attempt in range(MAX_ATTEMPTS):
            record = await self.authorize(game_id, token, deadline, player=True)
            try:
                access = tokens.Access.load(record.token_hash)
            except (ValueError, IndexError) as exc:
                raise GameCorrupt(game_id) from exc
            generation = access.generation + 1 if rotate else access.generation
            code = access.deal_code or await self._new_deal_code(
                load_stored(game_id, record.data, record.version).head, deadline
            )
            if rotate or not access.watch_hash:
                updated = tokens.Access.for_token(token, generation, code)
            else:
                updated = tokens.Access(access.play_hash, access.watch_hash, generation, code)
            blob = updated.dump()
            if blob != record.token_hash:
                replace = self.store.replace_token_hash(game_id, record.token_hash, blob)
                if not await self._timed("replace_token_hash", game_id, deadline, replace):
                    continue  # rotated (or shared) by another call meanwhile: again, from its record
            return Shared(tokens.show_deal_code(code), tokens.watch_token(token, generation))
        raise StoreUnavailable("replace_token_hash")

    async def _create(self, data: bytes, token_hash: bytes, deadline: float | None) -> str:
        for attempt in range(MAX_ATTEMPTS):
            game_id = tokens.new_game_id()
            record = st.GameRecord(game_id, FIRST_VERSION, token_hash, data)
            try:
                await self._timed("create", game_id, deadline, self.store.create(record, ttl=self.game_ttl))
                return game_id
            except st.GameExists:  # 128 random bits collided: draw again
                if attempt == MAX_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _first_deal(
        self, blob: bytes, request_id: str, deadline: float | None
    ) -> Dealt | RecordedNewGame:
        """The first NewGame answer for a request id, from its record."""
        record = replies.read_new_game_record(blob)
        token = tokens.open_token(record.sealed_token, request_id)
        if isinstance(record, replies.LegacyNewGameRecord):
            return RecordedNewGame(record.reply, token)
        game_id = record.game_id
        stored = await self.load(game_id, deadline)
        first = load_stored(game_id, stored.data, stored.version).first_game()
        try:
            access = tokens.Access.load(stored.token_hash)
        except (ValueError, IndexError) as exc:
            raise GameCorrupt(game_id) from exc
        watch = tokens.watch_token(token, access.generation) if access.watch_hash else ""
        code = tokens.show_deal_code(access.deal_code) if access.deal_code else ""
        return Dealt(game_id, token, first, record.seeds_tried, watch, code)
