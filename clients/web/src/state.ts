// The page's state, shared by its modules: the game shown, the player's token, the pile picked up.
import { createBrowserClient, type Game, type Move, type Variant } from "@accordion/client/browser";

export const client = createBrowserClient(window.location.origin);

/** A pile of the board: its zone ("row" in row games) and its number (1-based, as in the notation). */
export interface Spot {
  zone: string;
  pile: number;
  count?: number; // a tableau pile picked up at one of its face-up cards: the cards from it up
}

export const state = {
  variants: [] as Variant[],
  game: undefined as Game | undefined,
  token: "",
  dealCode: "", // the shown game's deal code: Replay deal and Share deal
  selected: null as Spot | null, // the pile picked up, waiting for its target
  hinted: undefined as Move | undefined,
  readonly: false,
  startedAt: 0, // when this page started showing the game (ms), for the clock
};

export const key = (spot: Spot): string => `${spot.zone}:${spot.pile}`;

export function el<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`#${id} is missing from the page`);
  return found as T;
}

export const reducedMotion = (): boolean => window.matchMedia("(prefers-reduced-motion: reduce)").matches;
