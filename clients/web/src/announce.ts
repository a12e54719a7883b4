// What a screen reader hears after a move, in the player's words ("7 of hearts onto tableau pile
// 5"), through a polite live region of its own: the status line under the header keeps the
// game's figures for sighted players and tests.
import { GameStatus, MoveKind, ZoneKind, pileCards, type Game, type MoveInit } from "@accordion/client/browser";
import { cardWords, ZONE_NAME } from "./cards";
import { el } from "./state";

const PLACE: Record<string, string> = { tableau: "tableau pile", foundation: "foundation", waste: "waste", row: "pile" };

function movedWords(before: Game, move: MoveInit): string {
  if (move.kind === MoveKind.MOVE) {
    const zone = before.zones.find((z) => z.kind === move.fromZone);
    const pile = zone?.piles[(move.fromPile ?? 1) - 1];
    const count = Math.max(1, move.count ?? 1);
    const first = pile ? pileCards(pile).at(-count)?.card : undefined;
    const what = first ? `${cardWords(first)}${count > 1 ? ` and ${count - 1} more` : ""}` : `${count} card${count > 1 ? "s" : ""}`;
    const to = ZONE_NAME[move.toZone ?? ZoneKind.UNSPECIFIED] ?? "";
    return `${what} onto ${PLACE[to] ?? to}${to === "foundation" ? "" : ` ${move.toPile}`}`;
  }
  if (move.kind === MoveKind.STACK) {
    const top = before.piles[(move.fromPile ?? 1) - 1]?.cards.at(-1);
    return `${top ? cardWords(top) : "pile"} onto pile ${move.toPile}`;
  }
  const words: Partial<Record<MoveKind, string>> = {
    [MoveKind.DRAW]: "Drew from the stock",
    [MoveKind.DEAL]: "Dealt from the stock",
    [MoveKind.REDEAL]: "The waste turned back into the stock",
    [MoveKind.REMOVE]: "Removed",
    [MoveKind.CLAIM]: "Claimed",
  };
  return (move.kind !== undefined && words[move.kind]) || "Played";
}

/** Says a move the player made, and the game's end when it ends. */
export function announceMove(before: Game, move: MoveInit, after: Game): void {
  const end = after.status === GameStatus.WON ? " You won!" : after.status === GameStatus.LOST ? " The game is lost." : "";
  el("announce").textContent = `${movedWords(before, move)}.${end}`;
}
