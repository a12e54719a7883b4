// The legal moves read as piles: which pile a move takes cards from and puts them on, the moves
// between two piles, what a click on the stock plays, and the move a drop makes.
import { MoveKind, isTableau, tableauMove, type Game, type Move, type MoveInit } from "@accordion/client/browser";
import { ZONE_NAME, ZONE_OF } from "./cards";
import { key, type Spot } from "./state";

/** The piles a move takes cards from and puts them on (a Wish pair: its two piles), if any. */
export function ends(game: Game, m: Move): [Spot, Spot] | null {
  if (m.kind === MoveKind.STACK || m.kind === MoveKind.CLAIM) {
    return [{ zone: "row", pile: m.fromPile }, { zone: "row", pile: m.toPile }];
  }
  if (m.kind === MoveKind.MOVE) {
    return [{ zone: ZONE_NAME[m.fromZone] ?? "", pile: m.fromPile }, { zone: ZONE_NAME[m.toZone] ?? "", pile: m.toPile }];
  }
  if (m.kind === MoveKind.REMOVE && isTableau(game) && m.positions.length === 2) {
    return [{ zone: "tableau", pile: m.positions[0] ?? 0 }, { zone: "tableau", pile: m.positions[1] ?? 0 }];
  }
  return null;
}

/** The legal moves between two piles, either way for a Wish pair (which has no direction). */
export function movesBetween(game: Game, from: Spot, to: Spot): Move[] {
  const found: Move[] = [];
  for (const m of game.legalMoves) {
    const e = ends(game, m);
    if (!e) continue;
    const [a, b] = e;
    const sameTarget = key(b) === key(to) || (b.zone === "foundation" && to.zone === "foundation");
    if ((key(a) === key(from) && sameTarget) || (m.kind === MoveKind.REMOVE && key(b) === key(from) && key(a) === key(to))) {
      found.push(m);
    }
  }
  return found;
}

/** The piles a picked-up pile may go to now. */
export function targetsOf(game: Game, from: Spot): Set<string> {
  const targets = new Set<string>();
  const exact = new Set<string>(); // of the moves taking as many cards as were picked up
  for (const m of game.legalMoves) {
    const e = ends(game, m);
    if (!e) continue;
    if (key(e[0]) === key(from)) {
      targets.add(key(e[1]));
      if (m.kind !== MoveKind.MOVE || m.count === from.count) exact.add(key(e[1]));
    }
    if (m.kind === MoveKind.REMOVE && key(e[1]) === key(from)) targets.add(key(e[0]));
  }
  return from.count !== undefined && exact.size ? exact : targets;
}

/** The piles that can move now (Accordion's REMOVE pairs: both piles). */
export function movablePiles(game: Game): Set<string> {
  const movable = new Set<string>();
  for (const m of game.legalMoves) {
    if (m.kind === MoveKind.REMOVE && !isTableau(game)) m.positions.forEach((p) => movable.add(`row:${p}`));
    const e = ends(game, m);
    if (!e) continue;
    movable.add(key(e[0]));
    if (m.kind === MoveKind.REMOVE) movable.add(key(e[1]));
  }
  return movable;
}

/** What a click on the stock plays, when legal: DRAW, DEAL (row games, Spider) or REDEAL (Klondike). */
export function stockMove(game: Game): Move | undefined {
  for (const kind of [MoveKind.DRAW, MoveKind.DEAL, MoveKind.REDEAL]) {
    const found = game.legalMoves.find((m) => m.kind === kind);
    if (found) return found;
  }
  return undefined;
}

/** A pile released on another: the legal move between them, or the move as asked (which the
 * server refuses in words when it is illegal). Of several legal counts (a run in part), the one
 * picked up at, else the longest (as the notation's `3>7`). */
export function dropMove(game: Game, from: Spot, to: Spot): MoveInit | undefined {
  const legal = movesBetween(game, from, to);
  const chosen =
    legal.find((m) => m.kind === MoveKind.STACK) ??
    legal.find((m) => from.count !== undefined && m.count === from.count) ??
    legal.reduce<Move | undefined>((best, m) => (best && best.count >= m.count ? best : m), undefined);
  if (chosen) return chosen;
  if (from.zone === "row") return { kind: MoveKind.STACK, fromPile: from.pile, toPile: to.pile };
  const [fromZone, toZone] = [ZONE_OF[from.zone], ZONE_OF[to.zone]];
  if (fromZone === undefined || toZone === undefined) return undefined;
  return tableauMove(fromZone, from.pile, toZone, to.pile, from.count ?? 1);
}

/** The move sending a pile's top card to the foundations, when legal. */
export function homeMove(game: Game, from: Spot): Move | undefined {
  return movesBetween(game, { zone: from.zone, pile: from.pile }, { zone: "foundation", pile: 0 }).find((m) => m.count === 1);
}
