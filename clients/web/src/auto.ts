// Moves the page plays for the player, when asked to (the options under the board).
import { MoveKind, ZoneKind, isTableau, type Game, type Move } from "@accordion/client/browser";
import { el, reducedMotion, state } from "./state";

/** The options under the board: auto-move (aces and twos go home as soon as they can: never a
 * card another would want to build on) and auto-complete (every card face up, stock and waste
 * empty, in a game with a stock: the cards go home by themselves). */
export async function autoPlay(of: Game, play: (move: Move) => Promise<void>): Promise<void> {
  if (!isTableau(of)) return;
  const homeMoves = of.legalMoves.filter((m) => m.kind === MoveKind.MOVE && m.toZone === ZoneKind.FOUNDATION && m.count === 1);
  const rankOf = (m: Move): number => {
    const pile = of.zones.find((z) => z.kind === m.fromZone)?.piles[m.fromPile - 1];
    return pile?.cards.at(-1)?.rank ?? 99;
  };
  let home = el<HTMLInputElement>("auto-home").checked ? homeMoves.find((m) => rankOf(m) <= 2) : undefined;
  // Auto-complete: games dealt with hidden cards and a stock (Klondike, Emperor); not Streets and
  // Alleys, open from its deal, where sending cards home is the player's whole game.
  if (!home && el<HTMLInputElement>("auto-complete").checked && of.zones.some((z) => z.kind === ZoneKind.STOCK)) {
    const left = (kind: ZoneKind): number => of.zones.find((z) => z.kind === kind)?.piles.reduce((n, p) => n + p.cards.length + p.faceDown, 0) ?? 0;
    const faceDown = of.zones.some((z) => z.kind === ZoneKind.TABLEAU && z.piles.some((p) => p.faceDown > 0));
    if (!faceDown && left(ZoneKind.STOCK) === 0 && left(ZoneKind.WASTE) === 0) home = homeMoves[0];
  }
  if (!home) return;
  await new Promise((resolve) => setTimeout(resolve, reducedMotion() ? 0 : 150));
  if (state.game === of) await play(home);
}
