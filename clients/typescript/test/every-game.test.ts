/**
 * Every game the server lists, played with the TypeScript client against a real server: a seeded
 * deal, up to 20 legal moves (tableau MOVEs rebuilt with `tableauMove`, DRAW with `client.draw`,
 * the rest by notation), the layout text checked after each (one back per face-down card, none
 * named unless dealt open), then a resignation taken back.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  BACK,
  GameStatus,
  MoveKind,
  ZoneKind,
  createAccordionClient,
  isTableau,
  layoutLines,
  tableauMove,
  type AccordionClient,
  type Game,
  type Move,
} from "../src/index.js";
import { startServer, type RunningServer } from "./server.js";

const TABLEAU_GAMES = ["wish", "streets-and-alleys", "klondike", "klondike-draw-one", "emperor", "spider"];
const MOVES_PER_GAME = 20;

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

/** A small seeded generator (mulberry32), so a failing game replays. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function seedOf(variant: string): number {
  return [...variant].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 10_000, 7);
}

function checkLayout(game: Game): void {
  if (!isTableau(game)) return;
  const tableau = game.zones.find((z) => z.kind === ZoneKind.TABLEAU);
  assert.ok(tableau, "a tableau game has a tableau");
  assert.deepEqual(game.piles.map((p) => p.cards), tableau.piles.map((p) => p.cards), "piles: the face-up cards");
  const open = game.options["open"] === "true";
  for (const zone of game.zones) {
    for (const pile of zone.piles) assert.equal(pile.faceDownCards.length, open ? pile.faceDown : 0);
  }
  const down = tableau.piles.reduce((n, p) => n + p.faceDown, 0);
  const text = layoutLines(game).join("\n");
  assert.equal(text.split(BACK).length - 1, open ? 0 : down, text);
}

async function playOne(game: Game, move: Move): Promise<Game> {
  const options = { expectedVersion: game.version };
  const reply =
    move.kind === MoveKind.DRAW
      ? await client.draw(game.id, options)
      : move.kind === MoveKind.MOVE
        ? await client.move(game.id, tableauMove(move.fromZone, move.fromPile, move.toZone, move.toPile, move.count || 1), options)
        : await client.play(game.id, move.notation, options);
  assert.equal(reply.move?.notation, move.notation);
  return reply.game!;
}

describe("every game", () => {
  it("lists the tableau games", async () => {
    const variants = await client.listVariants();
    for (const id of TABLEAU_GAMES) {
      const found = variants.find((v) => v.id === id);
      assert.ok(found, `${id} is not served`);
      assert.equal(found.family, "tableau");
      assert.ok(found.moveKinds.includes(MoveKind.RESIGN));
    }
  });

  it("plays a game of each variant", async () => {
    const variants = await client.listVariants();
    const deals = [...variants.map((v) => ({ variant: v.id, options: {} })), { variant: "klondike", options: { open: "true" } }];
    for (const { variant, options } of deals) {
      const next = random(seedOf(variant));
      const { game: dealt } = await client.newGame({ variant, options, start: { case: "seed", value: BigInt(seedOf(variant)) } });
      let game = dealt!;
      assert.equal(isTableau(game), TABLEAU_GAMES.includes(variant), variant);
      checkLayout(game);
      let played = 0;
      for (; played < MOVES_PER_GAME && game.status === GameStatus.IN_PROGRESS; played++) {
        const legal = game.legalMoves.filter((m) => m.kind !== MoveKind.RESIGN);
        const move = legal[Math.floor(next() * legal.length)];
        if (!move) break;
        game = await playOne(game, move);
        checkLayout(game);
      }
      assert.ok(played > 0, `${variant}: no legal move at the deal`);
      assert.equal(game.version, BigInt(played + 1), variant);
      if (game.status === GameStatus.IN_PROGRESS) {
        const resigned = await client.resign(game.id, { expectedVersion: game.version });
        assert.equal(resigned.game!.status, GameStatus.LOST, variant);
        checkLayout(resigned.game!);
        const undone = await client.undo(game.id);
        assert.equal(undone.game!.status, GameStatus.IN_PROGRESS, variant);
      }
    }
  });
});
