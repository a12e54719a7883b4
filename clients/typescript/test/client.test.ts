/**
 * The TypeScript client against a real server that the test starts (see server.ts): a seeded
 * game played move by move, the errors as typed AccordionErrors, and WatchGame's stream.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  AccordionError,
  Code,
  GameEvent_Kind,
  GameStatus,
  MoveKind,
  createAccordionClient,
  type AccordionClient,
} from "../src/index.js";
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
  } catch (err) {
    assert.ok(err instanceof AccordionError, `not an AccordionError: ${err}`);
    assert.equal(err.code, code, err.message);
    assert.equal(err.reason, reason, err.message);
    return err;
  }
  assert.fail(`expected ${reason}`);
}

describe("accordion client", () => {
  it("lists the variants", async () => {
    const variants = await client.listVariants();
    const accordion = variants.find((v) => v.id === "accordion");
    assert.ok(accordion, "accordion is registered");
    assert.ok(accordion.moveKinds.includes(MoveKind.STACK));
    assert.deepEqual(
      (await client.listVariants("accordion")).map((v) => v.id),
      ["accordion"],
    );
  });

  it("plays a seeded game: the first legal move until it is over or 20 moves", async () => {
    const { game, token } = await client.newGame({ variant: "accordion", start: { case: "seed", value: 7n } });
    assert.ok(game);
    assert.equal(token.length > 0, true);
    assert.equal(client.tokenFor(game.id), token);
    assert.equal(game.version, 1n);
    assert.equal(game.status, GameStatus.IN_PROGRESS);
    assert.equal(game.piles.length, 52);
    assert.deepEqual(
      game.legalMoves.slice(0, 4).map((m) => m.notation),
      ["10D>4D", "10D>JD", "KC>3C", "9H>6H"],
    );

    let current = game;
    const played: string[] = [];
    while (current.status === GameStatus.IN_PROGRESS && played.length < 20) {
      const first = current.legalMoves[0]!;
      const reply = await client.play(current.id, first.notation, { expectedVersion: current.version });
      assert.equal(reply.move?.notation, first.notation);
      assert.equal(reply.game!.version, current.version + 1n, "each move adds one to the version");
      assert.equal(reply.game!.movesPlayed, current.movesPlayed + 1);
      played.push(first.notation);
      current = reply.game!;
    }
    assert.deepEqual(played.slice(0, 3), ["10D>4D", "9H>6H", "10S>2S"]);
    assert.equal(current.version, BigInt(played.length + 1));
    assert.deepEqual(await client.getGame(game.id), current);

    const score = await client.score(game.id);
    assert.equal(score.version, current.version);
    assert.equal(score.pilesLeft, current.piles.length);
    assert.equal(score.penalty, current.penalty);

    const hint = await client.hint(game.id);
    assert.equal(hint.version, current.version);
    if (current.status === GameStatus.IN_PROGRESS) {
      assert.ok(hint.move && current.legalMoves.some((m) => m.notation === hint.move!.notation));
    }

    const legal = await client.legalMoves(game.id);
    assert.deepEqual(legal.moves, current.legalMoves);

    const undone = await client.undo(game.id, { expectedVersion: current.version });
    assert.equal(undone.move?.notation, played.at(-1));
    assert.equal(undone.game!.version, current.version + 1n, "an undo adds one too");
    assert.equal(undone.game!.movesPlayed, played.length - 1);
  });

  it("plays a structured move, and retries with a request id apply nothing twice", async () => {
    const { game } = await client.newGame({ variant: "accordion", start: { case: "seed", value: 7n } });
    const move = game!.legalMoves.find((m) => m.notation === "9H>6H")!;
    const once = await client.move(game!.id, { kind: move.kind, fromPile: move.fromPile, toPile: move.toPile }, { requestId: "r-1" });
    const twice = await client.move(game!.id, { kind: move.kind, fromPile: move.fromPile, toPile: move.toPile }, { requestId: "r-1" });
    assert.equal(once.move?.notation, "9H>6H");
    assert.equal(twice.game!.version, 2n);
    assert.equal((await client.getGame(game!.id)).version, 2n);
  });

  it("resigns a game: LOST, the penalty stands, a second resign is refused, undo takes it back", async () => {
    const { game } = await client.newGame({ variant: "accordion", start: { case: "seed", value: 7n } });
    const id = game!.id;
    assert.ok(game!.legalMoves.every((m) => m.kind !== MoveKind.RESIGN), "RESIGN is never listed");
    const resigned = await client.resign(id, { expectedVersion: 1n });
    assert.equal(resigned.move?.kind, MoveKind.RESIGN);
    assert.equal(resigned.move?.notation, "resign");
    assert.equal(resigned.game!.status, GameStatus.LOST);
    assert.equal(resigned.game!.penalty, game!.penalty);
    assert.equal(resigned.game!.legalMoves.length, 0);
    assert.ok(resigned.game!.state.endsWith(" resigned"));
    await rejects(client.resign(id), Code.FailedPrecondition, "ILLEGAL_MOVE");
    const undone = await client.undo(id);
    assert.equal(undone.move?.kind, MoveKind.RESIGN);
    assert.equal(undone.game!.status, GameStatus.IN_PROGRESS);
    const variants = await client.listVariants();
    assert.ok(variants.every((v) => v.moveKinds.includes(MoveKind.RESIGN)), "every variant lists RESIGN");
  });

  it("maps the server's errors to AccordionError with code, reason and details", async () => {
    const { game } = await client.newGame({ variant: "accordion", start: { case: "seed", value: 7n } });
    const id = game!.id;

    const illegal = await rejects(client.play(id, "KC>10D"), Code.FailedPrecondition, "ILLEGAL_MOVE");
    assert.equal(illegal.codeName, "FAILED_PRECONDITION");
    assert.deepEqual(
      illegal.legalMoves?.map((m) => m.notation),
      game!.legalMoves.map((m) => m.notation),
    );
    assert.equal(illegal.metadata["legal_moves"] !== undefined, true);

    await rejects(client.play(id, "not a move"), Code.InvalidArgument, "INVALID_MOVE");
    await rejects(client.undo(id), Code.FailedPrecondition, "NOTHING_TO_UNDO");

    await client.play(id, "10D>4D");
    const stale = await rejects(client.play(id, "9H>6H", { expectedVersion: 1n }), Code.Aborted, "VERSION_MISMATCH");
    assert.equal(stale.currentVersion, 2n);

    const stranger = createAccordionClient(server.baseUrl);
    try {
      await rejects(stranger.getGame(id), Code.Unauthenticated, "MISSING_TOKEN");
      stranger.setToken(id, "not-the-token");
      await rejects(stranger.getGame(id), Code.NotFound, "GAME_NOT_FOUND"); // as an unknown id
    } finally {
      stranger.close();
    }

    client.setToken("AAAAAAAAAAAAAAAAAAAAAA", "some-token");
    await rejects(client.getGame("AAAAAAAAAAAAAAAAAAAAAA"), Code.NotFound, "GAME_NOT_FOUND");
    await rejects(client.newGame({ variant: "no-such-game" }), Code.InvalidArgument, "UNKNOWN_VARIANT");
    const invalid = await rejects(
      client.play(id, "deal", { requestId: "x".repeat(200) }),
      Code.InvalidArgument,
      "INVALID_REQUEST",
    );
    assert.ok(invalid.fieldViolations.some((v) => v.field === "request_id"), JSON.stringify(invalid.fieldViolations));
  });

  it("watches a game's moves and undos as they happen", async () => {
    const { game } = await client.newGame({ variant: "accordion", start: { case: "seed", value: 7n } });
    const id = game!.id;
    await client.play(id, "10D>4D");
    const abort = new AbortController();
    const events = client.watch(id, 0n, abort.signal);
    const seen: string[] = [];
    const reading = (async () => {
      for await (const event of events) {
        seen.push(`${event.version} ${GameEvent_Kind[event.kind]} ${event.move?.notation}`);
        if (seen.length === 3) break;
      }
    })();
    await client.play(id, "9H>6H");
    await client.undo(id);
    await reading;
    abort.abort();
    assert.deepEqual(seen, ["2 MOVE 10D>4D", "3 MOVE 9H>6H", "4 UNDO 9H>6H"]);
  });
});
