// The board, drawn by the page from the Game message (not the server's SVG picture): its own
// DOM lets a pile take keyboard focus and an accessible name, a dragged run follow the pointer,
// and a card slide from where it was to where it lands. What it may show is what the message
// holds: a face-down card is a back unless the game was dealt open (then a paler face, marked).
// The printed corners, pips and counts are CSS content (attr(data-text)), not text: a pile's
// accessible name, which says every card in words, is then all its name (axe-core's
// label-content-name-mismatch). Hooks for tests and other pages: `.pile[data-zone][data-pile]` per pile (1-based, as in the
// notation), `.stock[data-zone=stock]`, `.card-face[data-card]` and `.card-back`.
import { MoveKind, ZoneKind, isTableau, pileCards, type Card, type Game, type ShownCard } from "@accordion/client/browser";
import { cardLabel, cardWords, isRed, rankText, suitSymbol, ZONE_NAME } from "./cards";
import { cornerHeight, layoutBoard, type BoardIn, type PileIn } from "./layout";
import { movablePiles, stockMove, targetsOf, ends } from "./moves";
import { key, reducedMotion, state } from "./state";

const ZONE_WORD: Record<string, string> = { tableau: "Tableau pile", foundation: "Foundation", waste: "Waste", row: "Pile" };

export interface BoardOptions {
  rowStock: boolean; // a row game with a stock (its variant deals)
  wasteFan: number; // cards of the waste shown (3 in draw-three)
}

/** Draws the game into `board`, sliding the cards that moved (unless motion is reduced). */
export function drawBoard(board: HTMLElement, game: Game, options: BoardOptions): void {
  const before = cardRects(board);
  const focused = (document.activeElement as HTMLElement | null)?.closest?.<HTMLElement>("[data-zone]");
  const focusKey = focused && board.contains(focused) ? `${focused.dataset["zone"]}:${focused.dataset["pile"] ?? 1}` : "";
  const table = document.createElement("div");
  table.className = "table";
  table.dataset["version"] = String(game.version);
  const top = board.getBoundingClientRect().top + window.scrollY;
  const input = boardInput(game, options, board.clientWidth, Math.max(320, window.innerHeight - top - 12));
  const geo = layoutBoard(input);
  table.style.width = `${geo.width}px`;
  table.style.height = `${geo.height}px`;
  table.style.setProperty("--card-w", `${geo.cardW}px`);
  table.style.setProperty("--card-h", `${geo.cardH}px`);
  table.style.setProperty("--corner", `${cornerHeight(geo.cardW)}px`);
  for (const [spot, place] of geo.places) {
    const [zone, n] = spot.split(":") as [string, string];
    const pile = document.createElement("div");
    pile.className = zone === "stock" ? "stock" : "pile";
    pile.dataset["zone"] = zone;
    if (zone !== "stock") pile.dataset["pile"] = n;
    pile.tabIndex = -1;
    pile.setAttribute("role", "button");
    Object.assign(pile.style, { left: `${place.x}px`, top: `${place.y}px`, width: `${place.w}px`, height: `${place.h}px` });
    fillPile(pile, game, zone, Number(n), place.downStep, place.upStep, geo.wasteStep, options.wasteFan);
    table.append(pile);
    if (place.label) {
      const number = document.createElement("span");
      number.className = "pile-number";
      number.setAttribute("aria-hidden", "true");
      number.textContent = n;
      Object.assign(number.style, { left: `${place.x}px`, top: `${place.y - 16}px`, width: `${place.w}px` });
      table.append(number);
    }
  }
  board.replaceChildren(table);
  decorate(board);
  const again = focusKey ? board.querySelector<HTMLElement>(spotSelector(focusKey)) : null;
  (again ?? board.querySelector<HTMLElement>(".pile, .stock"))?.setAttribute("tabindex", "0");
  again?.focus({ preventScroll: true });
  if (!reducedMotion()) slide(board, before);
}

export const spotSelector = (k: string): string => {
  const [zone, n] = k.split(":");
  return zone === "stock" ? '.stock[data-zone="stock"]' : `.pile[data-zone="${zone}"][data-pile="${n}"]`;
};

function boardInput(game: Game, options: BoardOptions, width: number, height: number): BoardIn {
  if (!isTableau(game)) {
    const main = game.piles.map((_, i) => ({ key: `row:${i + 1}`, down: 0, up: 1 }));
    return { width, height, top: [], wasteFan: 1, main, fanned: false, stock: options.rowStock || game.stockSize > 0 };
  }
  const of = (kind: ZoneKind): PileIn[] =>
    (game.zones.find((z) => z.kind === kind)?.piles ?? []).map((p, i) => ({ key: `${ZONE_NAME[kind]}:${i + 1}`, down: p.faceDown, up: p.cards.length }));
  const stock = game.zones.some((z) => z.kind === ZoneKind.STOCK) ? [{ key: "stock:1", down: 0, up: 0 }] : [];
  const top = [...stock, ...of(ZoneKind.WASTE), ...of(ZoneKind.FOUNDATION)];
  return { width, height, top, wasteFan: options.wasteFan, main: of(ZoneKind.TABLEAU), fanned: true, stock: false };
}

function cardFace(card: Card, extra = ""): HTMLDivElement {
  const div = document.createElement("div");
  div.className = `card card-face ${isRed(card) ? "red" : "black"}${extra}`;
  div.dataset["card"] = cardLabel(card);
  const corner = document.createElement("span");
  corner.className = "corner";
  corner.dataset["text"] = `${rankText(card)}${suitSymbol(card)}`;
  const pip = document.createElement("span");
  pip.className = "pip";
  pip.dataset["text"] = suitSymbol(card);
  div.append(corner, pip);
  return div;
}

function shown(s: ShownCard): HTMLDivElement {
  if (s.card && s.faceDown) return cardFace(s.card, " open-down");
  if (s.card) return cardFace(s.card);
  const back = document.createElement("div");
  back.className = "card card-back";
  return back;
}

function slot(text = ""): HTMLDivElement {
  const div = document.createElement("div");
  div.className = "slot";
  div.dataset["text"] = text;
  return div;
}

function badge(n: number): HTMLSpanElement {
  const span = document.createElement("span");
  span.className = "count";
  span.dataset["text"] = String(n);
  return span;
}

const words = (s: ShownCard): string => (s.card ? `${cardWords(s.card)}${s.faceDown ? " (face down, dealt open)" : ""}` : "face down");

/** A pile's cards and its accessible name ("Tableau pile 3: 2 face down, then 7 of hearts, 6 of spades"). */
function fillPile(pile: HTMLElement, game: Game, zone: string, n: number, down: number, up: number, wasteStep: number, wasteFan: number): void {
  const place = (card: HTMLElement, x: number, y: number): void => {
    card.style.left = `${x}px`;
    card.style.top = `${y}px`;
    card.setAttribute("aria-hidden", "true");
    pile.append(card);
  };
  if (zone === "stock") {
    const zonePile = game.zones.find((z) => z.kind === ZoneKind.STOCK)?.piles[0];
    const size = zonePile ? zonePile.faceDown + zonePile.cards.length : game.stockSize;
    const next = zonePile?.faceDownCards[0];
    if (size) place(next ? cardFace(next, " open-down") : shown({ faceDown: true }), 0, 0);
    else pile.append(slot(stockMove(game)?.kind === MoveKind.REDEAL ? "↻" : ""));
    if (size) pile.append(badge(size));
    pile.setAttribute("aria-label", `Stock: ${size} card${size === 1 ? "" : "s"} face down${size ? "" : ", empty"}`);
    return;
  }
  const cards = shownCards(game, zone, n);
  const name = `${ZONE_WORD[zone] ?? zone} ${n}`;
  if (zone === "tableau") {
    let y = 0;
    for (const c of cards) {
      place(shown(c), 0, y);
      y += c.faceDown ? down : up;
    }
    const hidden = cards.filter((c) => c.faceDown && !c.card).length;
    const seen = cards.filter((c) => !c.faceDown || c.card).map(words);
    pile.setAttribute("aria-label", `${name}: ${cards.length ? [hidden ? `${hidden} face down` : "", ...seen].filter(Boolean).join(", ") : "empty"}`);
  } else if (zone === "waste") {
    const fan = cards.slice(-Math.max(1, wasteFan));
    fan.forEach((c, i) => place(shown(c), i * wasteStep, 0));
    pile.setAttribute("aria-label", `${name}: ${cards.length ? `${words(cards.at(-1)!)} on top, ${cards.length} card${cards.length === 1 ? "" : "s"}` : "empty"}`);
  } else {
    if (cards.length > 1) pile.append(Object.assign(document.createElement("div"), { className: "depth" }));
    const last = cards.at(-1);
    if (last) place(shown(last), 0, 0);
    pile.setAttribute("aria-label", `${name}: ${last ? `${words(last)} on top, ${cards.length} card${cards.length === 1 ? "" : "s"}` : "empty"}`);
  }
  if (!cards.length) pile.append(slot());
  if (zone !== "tableau" && cards.length > 1) pile.append(badge(cards.length));
}

function shownCards(game: Game, zone: string, n: number): ShownCard[] {
  if (zone === "row") return (game.piles[n - 1]?.cards ?? []).map((card) => ({ faceDown: false, card }));
  const kind = Object.entries(ZONE_NAME).find(([, name]) => name === zone)?.[0];
  const pile = game.zones.find((z) => z.kind === Number(kind))?.piles[n - 1];
  return pile ? pileCards(pile) : [];
}

/** Marks the legal moves on the board: piles that can move, the one picked up, its targets, the
 * hint. Marked by outline and by a badge's word (not by colour alone), and in each pile's
 * accessible description. */
export function decorate(board: HTMLElement): void {
  const game = state.game;
  const movable = game && !state.readonly ? movablePiles(game) : new Set<string>();
  const targets = game && state.selected ? targetsOf(game, state.selected) : new Set<string>();
  const hintedEnds = game && state.hinted ? ends(game, state.hinted) : null;
  const hinted = new Set(hintedEnds ? hintedEnds.map(key) : []);
  for (const pile of board.querySelectorAll<HTMLElement>(".pile")) {
    const here = `${pile.dataset["zone"]}:${pile.dataset["pile"]}`;
    const picked = state.selected !== null && here === key(state.selected);
    pile.classList.toggle("movable", movable.has(here));
    pile.classList.toggle("selected", picked);
    pile.classList.toggle("target", targets.has(here));
    pile.classList.toggle("hinted", hinted.has(here));
    pile.setAttribute("aria-pressed", String(picked));
    const says = [picked ? "picked up" : "", targets.has(here) ? "a legal place to put it" : "", movable.has(here) && !picked ? "can move" : "", hinted.has(here) ? "hinted" : ""];
    pile.setAttribute("aria-description", says.filter(Boolean).join(", "));
    pile.dataset["mark"] = picked ? "picked" : targets.has(here) ? "drop here" : hinted.has(here) ? "hint" : "";
  }
  const stock = board.querySelector<HTMLElement>(".stock");
  if (stock) {
    const can = !!game && !state.readonly && stockMove(game) !== undefined;
    stock.classList.toggle("movable", can);
    stock.setAttribute("aria-description", can ? "click to deal" : "");
  }
  board.classList.toggle("readonly", state.readonly);
}

// --- sliding cards (FLIP: where each card was, where it is, a transform between) --------------
function cardRects(board: HTMLElement): Map<string, DOMRect> {
  const rects = new Map<string, DOMRect>();
  const seen = new Map<string, number>();
  for (const card of board.querySelectorAll<HTMLElement>(".card-face[data-card]")) {
    const label = card.dataset["card"] ?? "";
    const k = `${label}#${seen.get(label) ?? 0}`; // two decks: the same label twice
    seen.set(label, (seen.get(label) ?? 0) + 1);
    rects.set(k, card.getBoundingClientRect());
  }
  return rects;
}

function slide(board: HTMLElement, before: Map<string, DOMRect>): void {
  if (!before.size) return;
  const seen = new Map<string, number>();
  for (const card of board.querySelectorAll<HTMLElement>(".card-face[data-card]")) {
    const label = card.dataset["card"] ?? "";
    const was = before.get(`${label}#${seen.get(label) ?? 0}`);
    seen.set(label, (seen.get(label) ?? 0) + 1);
    if (!was) continue;
    const now = card.getBoundingClientRect();
    const dx = was.left - now.left;
    const dy = was.top - now.top;
    if (Math.abs(dx) < 1 && Math.abs(dy) < 1) continue;
    // A sliding card takes no clicks: a press lands on the pile that is there now.
    card.style.pointerEvents = "none";
    const motion = card.animate([{ transform: `translate(${dx}px, ${dy}px)`, zIndex: 50 }, { transform: "none", zIndex: 50 }], { duration: 180, easing: "ease-out" });
    motion.onfinish = () => (card.style.pointerEvents = "");
  }
}
