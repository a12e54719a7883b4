/**
 * Sharing (issue 29) against a real server: the watch token reads and watches but cannot play,
 * a deal code deals the same cards (hidden ones still hidden), and ShareGame rotates the watch
 * token.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { AccordionError, Code, GameEvent_Kind, createAccordionClient, type AccordionClient } from "../src/index.js";
import { startServer, type RunningServer } from "./server.js";

let server: RunningServer;
let client: AccordionClient;

before(async () => {
  server = await startServer();
  client = createAccordionClient(server.baseUrl);
});

after(async () => {
  client?.close();
  await server?.stop();
});

async function rejects(promise: Promise<unknown>, code: Code, reason: string): Promise<AccordionError> {
  try {
    await promise;
  } catch (thrown) {
    const err = AccordionError.from(thrown); // the raw client throws ConnectError
    assert.equal(err.code, code, err.message);
    assert.equal(err.reason, reason, err.message);
    return err;
  }
  assert.fail(`expected ${reason}`);
}

const DEAL_CODE = /^[0-9A-HJKMNP-TV-Z]{4}(?:-[0-9A-HJKMNP-TV-Z]{4}){3}$/;

describe("sharing", () => {
  it("a watcher reads and watches with the watch token, and every change is refused", async () => {
    const dealt = await client.newGame({ variant: "klondike", start: { case: "seed", value: 11n } });
    const id = dealt.game!.id;
    assert.ok(dealt.watchToken, "NewGame returns a watch token");
    assert.notEqual(dealt.watchToken, dealt.token);
    const watcher = client.watcher(id, dealt.watchToken);
    const seen = await watcher.getGame();
    assert.equal(seen.text, dealt.game!.text);
    assert.deepEqual(
      (await watcher.legalMoves()).moves.map((m) => m.notation),
      dealt.game!.legalMoves.map((m) => m.notation),
    );
    assert.equal((await watcher.score()).penalty, dealt.game!.penalty);
    assert.match(new TextDecoder().decode(await watcher.picture()), /^<svg/);

    // The raw client with the watch token: every mutation is PERMISSION_DENIED, WATCH_ONLY.
    const asWatcher = client.tokenOptions(dealt.watchToken);
    const draw = { notation: "draw" };
    await rejects(client.raw.applyMove({ gameId: id, move: draw, requestId: "w1" }, asWatcher), Code.PermissionDenied, "WATCH_ONLY");
    await rejects(client.raw.undo({ gameId: id, requestId: "w2" }, asWatcher), Code.PermissionDenied, "WATCH_ONLY");
    await rejects(client.raw.shareGame({ gameId: id }, asWatcher), Code.PermissionDenied, "WATCH_ONLY");
    assert.equal((await client.getGame(id)).version, 1n, "nothing changed");

    // A move by the player reaches the watcher's stream.
    const abort = new AbortController();
    const events = watcher.watch(1n, abort.signal);
    const next = (async () => {
      for await (const event of events) return event;
      return undefined;
    })();
    await client.draw(id);
    const event = await next;
    abort.abort();
    assert.equal(event?.kind, GameEvent_Kind.MOVE);
    assert.equal(event?.version, 2n);
  });

  it("a deal code deals the same first position, hidden cards still hidden; it cannot be dealt open", async () => {
    const first = await client.newGame({ variant: "klondike", start: { case: "seed", value: 5n } });
    assert.match(first.dealCode, DEAL_CODE);
    assert.ok(first.dealCode.length <= 24);
    const again = await client.newGameFromCode(first.dealCode);
    assert.notEqual(again.game!.id, first.game!.id);
    assert.equal(again.game!.variant, "klondike");
    assert.equal(again.game!.text, first.game!.text);
    assert.deepEqual(again.game!.zones, first.game!.zones);
    assert.equal(client.tokenFor(again.game!.id), again.token, "the new game's token is kept");
    // Lower case with spaces, as a person might paste it: the client sends it upper-cased.
    const pasted = await client.newGameFromCode(` ${first.dealCode.toLowerCase()} `);
    assert.equal(pasted.game!.text, first.game!.text);

    await rejects(client.newGameFromCode(first.dealCode, { open: "true" }), Code.InvalidArgument, "DEAL_CODE_OPTIONS");
    await rejects(client.newGameFromCode("ZZZZ-ZZZZ-ZZZZ-ZZZZ"), Code.NotFound, "DEAL_CODE_NOT_FOUND");
  });

  it("shareGame gives the deal code and the watch token; rotate retires the old watch token", async () => {
    const dealt = await client.newGame({ variant: "accordion", start: { case: "seed", value: 7n } });
    const id = dealt.game!.id;
    const shared = await client.shareGame(id);
    assert.equal(shared.dealCode, dealt.dealCode);
    assert.equal(shared.watchToken, dealt.watchToken);
    const rotated = await client.shareGame(id, { rotate: true });
    assert.notEqual(rotated.watchToken, dealt.watchToken);
    assert.equal((await client.watcher(id, rotated.watchToken).getGame()).id, id);
    // The old watch token is now a wrong token: NOT_FOUND, the same answer as an unknown game.
    await rejects(client.watcher(id, dealt.watchToken).getGame(), Code.NotFound, "GAME_NOT_FOUND");
  });
});
