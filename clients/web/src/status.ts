// The line under the header, in a player's words ("21 cards face down · 24 in the stock · score 52
// (lower is better)"), not the engine's: the numbers it says are also kept in data attributes
// (data-face-down, data-stock, data-penalty, …) for scripts and tests.
import { GameStatus, ZoneKind, isTableau, type Game } from "@accordion/client/browser";

/** Whether the game ended by RESIGN: a resigned game's state string ends with "resigned". */
export const resigned = (of: Game): boolean => of.status === GameStatus.LOST && of.state.endsWith(" resigned");

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** The tableau's face-down cards (dealt open or not). */
export const faceDownCount = (game: Game): number =>
  game.zones.find((z) => z.kind === ZoneKind.TABLEAU)?.piles.reduce((n, p) => n + p.faceDown, 0) ?? 0;

/** The status line's words; a count that is nothing is left out (no stock, nothing face down). */
export function statusWords(game: Game): string {
  const faceDown = faceDownCount(game);
  const over = resigned(game) ? "Resigned" : game.status === GameStatus.WON ? "Won" : game.status === GameStatus.LOST ? "Lost: no more moves" : "";
  const words = [
    over,
    isTableau(game) ? (faceDown ? `${plural(faceDown, "card")} face down` : "") : plural(game.piles.length, "pile"),
    game.stockSize ? `${game.stockSize} in the stock` : "",
    `score ${game.penalty} (lower is better)`,
  ];
  return words.filter(Boolean).join(" · ");
}

/** The same numbers as data attributes on `status`. */
export function statusData(status: HTMLElement, game: Game): void {
  Object.assign(status.dataset, { variant: game.variant, penalty: String(game.penalty), stock: String(game.stockSize) });
  status.dataset["faceDown"] = isTableau(game) ? String(faceDownCount(game)) : "";
  status.dataset["piles"] = isTableau(game) ? "" : String(game.piles.length);
}
