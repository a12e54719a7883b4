/**
 * The zones helpers on Game messages built here: face-down cards are backs unless the game was
 * dealt open (then bracketed), and the move builders make the Move the contract describes.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  BACK,
  CardSchema,
  GameSchema,
  MoveKind,
  Suit,
  ZoneKind,
  ZonePileSchema,
  drawMove,
  isTableau,
  layoutLines,
  pairMove,
  tableauMove,
  type ZonePile,
} from "../src/index.js";

const SUITS: Record<string, Suit> = { "♠": Suit.SPADES, "♥": Suit.HEARTS, "♦": Suit.DIAMONDS, "♣": Suit.CLUBS };
const RANKS: Record<string, number> = { A: 1, J: 11, Q: 12, K: 13 };

function cards(texts: string) {
  return texts
    .split(" ")
    .filter(Boolean)
    .map((t) => create(CardSchema, { text: t, suit: SUITS[t.slice(-1)], rank: RANKS[t.slice(0, -1)] ?? Number(t.slice(0, -1)) }));
}

function pile(faceUp = "", faceDown = 0, faceDownCards = ""): ZonePile {
  return create(ZonePileSchema, { faceDown, cards: cards(faceUp), faceDownCards: cards(faceDownCards) });
}

function klondike(open: boolean) {
  return create(GameSchema, {
    variant: "klondike",
    zones: [
      { kind: ZoneKind.TABLEAU, piles: [pile("K♠ Q♥"), pile("9♦", 1, open ? "Q♣" : ""), pile("4♣", 2, open ? "7♦ 3♥" : ""), pile()] },
      { kind: ZoneKind.FOUNDATION, piles: [pile("A♠"), pile(), pile(), pile()] },
      { kind: ZoneKind.STOCK, piles: [open ? pile("", 2, "5♠ 6♠") : pile("", 21)] },
      { kind: ZoneKind.WASTE, piles: [pile("8♣ 4♦ 9♣ K♦")] },
    ],
  });
}

describe("zones", () => {
  it("writes a hidden game with backs and counts", () => {
    const game = klondike(false);
    assert.equal(isTableau(game), true);
    assert.equal(isTableau(create(GameSchema, { variant: "accordion" })), false);
    assert.deepEqual(layoutLines(game), [
      "foundations A♠ -- -- --  ·  stock 21  ·  waste 4: …4♦ 9♣ K♦",
      "1: K♠ Q♥",
      `2: ${BACK} 9♦`,
      `3: ${BACK} ${BACK} 4♣`,
      "4: -",
    ]);
  });

  it("brackets the face-down cards of an open game", () => {
    const lines = layoutLines(klondike(true));
    assert.equal(lines[0], "foundations A♠ -- -- --  ·  stock 2: next [5♠] [6♠]  ·  waste 4: …4♦ 9♣ K♦");
    assert.equal(lines[3], "3: [7♦] [3♥] 4♣");
    assert.ok(!lines.join("\n").includes(BACK));
  });

  it("builds moves and refuses nonsense", () => {
    const m = tableauMove(ZoneKind.TABLEAU, 3, ZoneKind.TABLEAU, 7, 4);
    assert.deepEqual([m.kind, m.fromZone, m.fromPile, m.toZone, m.toPile, m.count], [MoveKind.MOVE, ZoneKind.TABLEAU, 3, ZoneKind.TABLEAU, 7, 4]);
    const home = tableauMove(ZoneKind.WASTE, 1, ZoneKind.FOUNDATION);
    assert.deepEqual([home.fromZone, home.toZone, home.toPile, home.count], [ZoneKind.WASTE, ZoneKind.FOUNDATION, 0, 1]);
    assert.equal(drawMove().kind, MoveKind.DRAW);
    assert.deepEqual(pairMove(5, 3).positions, [3, 5]);
    assert.throws(() => tableauMove(ZoneKind.TABLEAU, 0, ZoneKind.TABLEAU, 2), RangeError);
    assert.throws(() => tableauMove(ZoneKind.TABLEAU, 1, ZoneKind.TABLEAU, 0), RangeError);
    assert.throws(() => tableauMove(ZoneKind.TABLEAU, 1, ZoneKind.TABLEAU, 2, 0), RangeError);
    assert.throws(() => tableauMove(9 as ZoneKind, 1, ZoneKind.TABLEAU, 2), RangeError);
    assert.throws(() => pairMove(2, 2), RangeError);
  });
});
