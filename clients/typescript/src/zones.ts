/**
 * Tableau games (Klondike, Spider, …): their layout is `Game.zones` (tableau, foundations, stock,
 * waste), and their moves are MOVE (cards from a pile of one zone onto a pile of another) and
 * DRAW. Helpers to read the zones, build the moves, and write the layout as text.
 *
 * ```ts
 * await client.move(game.id, tableauMove(ZoneKind.TABLEAU, 3, ZoneKind.TABLEAU, 7, 2)); // "3>7 x2"
 * await client.move(game.id, tableauMove(ZoneKind.WASTE, 1, ZoneKind.FOUNDATION));     // "w>f"
 * await client.move(game.id, drawMove());                                               // "draw"
 * console.log(layoutLines(game).join("\n"));
 * ```
 *
 * A face-down card is a back (`▒▒`): the server never names it unless the game was dealt open,
 * and then it is shown in brackets (`[7♣]`), still face down for the rules.
 */
import { create } from "@bufbuild/protobuf";
import {
  MoveKind,
  MoveSchema,
  ZoneKind,
  ZonePileSchema,
  type Card,
  type Game,
  type Move,
  type Zone,
  type ZonePile,
} from "./gen/accordion/v1/accordion_pb.js";

export const BACK = "▒▒";
export const EMPTY = "--";
const WASTE_SHOWN = 3;
const STOCK_SHOWN = 8;

/** Whether the game is laid out in zones (a tableau game) rather than one row (`Game.piles`). */
export function isTableau(game: Game): boolean {
  return game.zones.length > 0;
}

/** The game's zone of that kind, or undefined (Wish has no stock). */
export function zoneOf(game: Game, kind: ZoneKind): Zone | undefined {
  return game.zones.find((z) => z.kind === kind);
}

/** One card of a pile as the player sees it: `faceDown` cards have no `card` unless the game is open. */
export interface ShownCard {
  faceDown: boolean;
  card?: Card;
}

/** A pile's cards bottom to top: the face-down ones first (named only in an open game), then the face-up ones. */
export function pileCards(pile: ZonePile): ShownCard[] {
  const known = pile.faceDownCards;
  const down: ShownCard[] = known.map((card) => ({ faceDown: true, card }));
  for (let i = known.length; i < pile.faceDown; i++) down.push({ faceDown: true });
  return [...down, ...pile.cards.map((card) => ({ faceDown: false, card }))];
}

/** `▒▒`, `[7♣]` (face down in an open game) or the card's text. */
export function shownText(shown: ShownCard): string {
  if (!shown.card) return BACK;
  return shown.faceDown ? `[${shown.card.text}]` : shown.card.text;
}

/** `▒▒ ▒▒ 9♦ 8♣`; `-` for an empty pile. */
export function pileText(pile: ZonePile): string {
  return pileCards(pile).map(shownText).join(" ") || "-";
}

function onlyPile(zone: Zone | undefined): ZonePile {
  return zone?.piles[0] ?? create(ZonePileSchema);
}

/** The layout as text: foundations, stock and waste on one line, then `n: cards` per tableau pile. */
export function layoutLines(game: Game): string[] {
  const head: string[] = [];
  const foundations = zoneOf(game, ZoneKind.FOUNDATION);
  if (foundations) {
    const tops = foundations.piles.map((p) => pileCards(p).map(shownText).at(-1) ?? EMPTY);
    head.push(`foundations ${tops.join(" ")}`);
  }
  const stockZone = zoneOf(game, ZoneKind.STOCK);
  if (stockZone) {
    const stock = onlyPile(stockZone);
    const size = stock.faceDown + stock.cards.length;
    const next = stock.faceDownCards.slice(0, STOCK_SHOWN).map((c) => `[${c.text}]`);
    const more = stock.faceDownCards.length > STOCK_SHOWN ? " …" : "";
    head.push(next.length ? `stock ${size}: next ${next.join(" ")}${more}` : `stock ${size}`);
  }
  const wasteZone = zoneOf(game, ZoneKind.WASTE);
  if (wasteZone) {
    const cards = onlyPile(wasteZone).cards;
    const shown = cards.slice(-WASTE_SHOWN).map((c) => c.text).join(" ");
    head.push(cards.length ? `waste ${cards.length}: ${cards.length > WASTE_SHOWN ? "…" : ""}${shown}` : "waste 0");
  }
  const piles = zoneOf(game, ZoneKind.TABLEAU)?.piles ?? [];
  const width = String(piles.length).length;
  const rows = piles.map((p, i) => `${String(i + 1).padStart(width)}: ${pileText(p)}`);
  return head.length ? [head.join("  ·  "), ...rows] : rows;
}

/** A MOVE: `count` cards from the top of pile `fromPile` (1-based; the waste is pile 1) onto
 * `toPile` (0 only for the foundations: whichever takes the card). Throws RangeError before
 * anything is sent for a pile or count that cannot be. */
export function tableauMove(fromZone: ZoneKind, fromPile: number, toZone: ZoneKind, toPile = 0, count = 1): Move {
  for (const zone of [fromZone, toZone]) {
    if (!(zone in ZoneKind) || zone === ZoneKind.UNSPECIFIED) throw new RangeError(`no zone ${zone}`);
  }
  if (!Number.isInteger(fromPile) || fromPile < 1) throw new RangeError(`fromPile is 1-based, not ${fromPile}`);
  if (!Number.isInteger(toPile) || toPile < 0 || (toPile === 0 && toZone !== ZoneKind.FOUNDATION)) {
    throw new RangeError(`toPile is 1-based (0 only for whichever foundation), not ${toPile}`);
  }
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`count is at least 1, not ${count}`);
  return create(MoveSchema, { kind: MoveKind.MOVE, fromZone, fromPile, toZone, toPile, count });
}

/** DRAW: turn cards from the stock onto the waste. */
export function drawMove(): Move {
  return create(MoveSchema, { kind: MoveKind.DRAW });
}

/** Wish: the top cards of two tableau piles (1-based) of one rank leave the game. */
export function pairMove(first: number, second: number): Move {
  if (first === second || first < 1 || second < 1) throw new RangeError(`a pair is two different piles, not ${first} and ${second}`);
  return create(MoveSchema, { kind: MoveKind.REMOVE, positions: [Math.min(first, second), Math.max(first, second)] });
}
