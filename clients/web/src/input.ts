// Playing with a pointer, a finger or the keyboard. A pile (or a tableau pile from one of its
// face-up cards) is picked up by a click, a tap or Enter/Space, and put down the same way on
// another; or dragged: the card or run follows the pointer as a ghost while the legal targets
// are lit, and is dropped on the pile under the pointer. Arrow keys move between piles.
import { isTableau, type Game } from "@accordion/client/browser";
import { decorate } from "./board";
import { key, state, type Spot } from "./state";

export interface PlayActions {
  drop(from: Spot, to: Spot): void; // a pile put on another
  stock(): void; // the stock clicked
  home(from: Spot): void; // a double click: the top card to the foundations
  picked(): void; // the pick-up changed (clears the error)
}

function spotOf(pile: Element): Spot {
  const e = pile as HTMLElement;
  return { zone: e.dataset["zone"] ?? "row", pile: Number(e.dataset["pile"] ?? 1) };
}

/** The pile under a pointer; on a tableau pile's face-up card, with the count from it to the top. */
function pileAt(target: EventTarget | null): { spot: Spot; pile: HTMLElement; from: number } | null {
  const hit = target as Element | null;
  const pile = hit?.closest?.<HTMLElement>(".pile");
  if (!pile) return null;
  const spot = spotOf(pile);
  const cards = [...pile.querySelectorAll(".card")];
  const face = hit?.closest?.(".card-face:not(.open-down)");
  let from = cards.length ? cards.length - 1 : 0;
  if (spot.zone === "tableau" && face) {
    const faceUp = cards.filter((c) => c.matches(".card-face:not(.open-down)"));
    const at = faceUp.indexOf(face);
    if (at >= 0) {
      spot.count = faceUp.length - at;
      from = cards.indexOf(face);
    }
  }
  return { spot, pile, from };
}

const DRAG_START = 6; // px the pointer moves before a press becomes a drag

export function wireBoard(board: HTMLElement, game: () => Game | undefined, act: PlayActions): void {
  let press: { spot: Spot; pile: HTMLElement; from: number; x: number; y: number; id: number } | null = null;
  let ghost: HTMLElement | null = null;
  let dragged = false;

  const endDrag = (): void => {
    ghost?.remove();
    ghost = null;
    board.querySelectorAll(".lifted").forEach((c) => c.classList.remove("lifted"));
    board.classList.remove("dragging");
  };

  board.addEventListener("pointerdown", (event) => {
    if (state.readonly || !game() || event.button > 0) return;
    const at = pileAt(event.target);
    if (!at) return;
    press = { ...at, x: event.clientX, y: event.clientY, id: event.pointerId };
    dragged = false;
  });

  board.addEventListener("pointermove", (event) => {
    if (!press || press.id !== event.pointerId) return;
    const dx = event.clientX - press.x;
    const dy = event.clientY - press.y;
    if (!dragged && Math.hypot(dx, dy) < DRAG_START) return;
    const current = game();
    if (!dragged) {
      dragged = true;
      const cards = [...press.pile.querySelectorAll<HTMLElement>(".card")].slice(press.from);
      if (!cards.length || !current) return;
      board.setPointerCapture?.(event.pointerId);
      // The ghost: copies of the cards picked up, fixed under the pointer; the originals dimmed.
      ghost = document.createElement("div");
      ghost.className = "ghost";
      ghost.setAttribute("aria-hidden", "true");
      const first = cards[0]!.getBoundingClientRect();
      for (const card of cards) {
        const r = card.getBoundingClientRect();
        const copy = card.cloneNode(true) as HTMLElement;
        Object.assign(copy.style, { left: `${r.left - first.left}px`, top: `${r.top - first.top}px` });
        ghost.append(copy);
        card.classList.add("lifted");
      }
      Object.assign(ghost.style, { left: `${first.left}px`, top: `${first.top}px` });
      const table = board.querySelector<HTMLElement>(".table");
      for (const v of ["--card-w", "--card-h", "--corner"]) ghost.style.setProperty(v, table?.style.getPropertyValue(v) ?? "");
      document.body.append(ghost);
      board.classList.add("dragging");
      state.selected = press.spot;
      decorate(board);
    }
    if (ghost) ghost.style.transform = `translate(${dx}px, ${dy}px)`;
  });

  const release = (event: PointerEvent): void => {
    const from = press;
    press = null;
    const wasDrag = dragged;
    dragged = false;
    endDrag();
    if (!from || state.readonly || !game()) return;
    const under = document.elementFromPoint(event.clientX, event.clientY);
    const to = pileAt(under ?? event.target);
    if (wasDrag) {
      state.selected = null;
      if (to && key(to.spot) !== key(from.spot)) act.drop(from.spot, to.spot);
      else decorate(board);
      return;
    }
    if (to) choose(to.spot);
  };
  board.addEventListener("pointerup", release);
  board.addEventListener("pointercancel", () => {
    press = null;
    dragged = false;
    endDrag();
    state.selected = null;
    decorate(board);
  });

  /** A click, tap or Enter on a pile: pick it up, put it down (the same pile: down again), or move. */
  const choose = (spot: Spot): void => {
    if (state.selected === null) state.selected = spot;
    else if (key(state.selected) === key(spot)) state.selected = null;
    else {
      const from = state.selected;
      state.selected = null;
      decorate(board);
      return act.drop(from, spot);
    }
    act.picked();
    decorate(board);
  };

  board.addEventListener("click", (event) => {
    if (state.readonly || !game()) return;
    if ((event.target as Element).closest(".stock")) act.stock();
  });

  board.addEventListener("dblclick", (event) => {
    const current = game();
    if (state.readonly || !current || !isTableau(current)) return;
    const at = pileAt(event.target);
    state.selected = null;
    if (at) act.home(at.spot);
  });

  // The keyboard: one pile in the tab order at a time (a roving tabindex); arrows move it.
  board.addEventListener("keydown", (event) => {
    const here = (event.target as Element).closest<HTMLElement>(".pile, .stock");
    if (!here || state.readonly) return;
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      event.stopPropagation();
      if (here.classList.contains("stock")) return act.stock();
      return choose(spotOf(here));
    }
    if (event.key === "Escape" && state.selected) {
      state.selected = null;
      decorate(board);
      return;
    }
    const next = neighbour(board, here, event.key);
    if (next) {
      event.preventDefault();
      here.tabIndex = -1;
      next.tabIndex = 0;
      next.focus();
    }
  });
}

/** The pile an arrow key leads to: left/right in reading order, up/down the nearest in that direction. */
function neighbour(board: HTMLElement, from: HTMLElement, arrow: string): HTMLElement | null {
  const all = [...board.querySelectorAll<HTMLElement>(".stock, .pile")];
  const at = all.indexOf(from);
  if (arrow === "ArrowRight") return all[at + 1] ?? null;
  if (arrow === "ArrowLeft") return all[at - 1] ?? null;
  if (arrow !== "ArrowUp" && arrow !== "ArrowDown") return null;
  const r = from.getBoundingClientRect();
  let best: HTMLElement | null = null;
  let bestScore = Infinity;
  for (const other of all) {
    const o = other.getBoundingClientRect();
    const dy = arrow === "ArrowDown" ? o.top - r.top : r.top - o.top;
    if (dy <= 4) continue;
    const score = dy + 3 * Math.abs(o.left - r.left);
    if (score < bestScore) [best, bestScore] = [other, score];
  }
  return best;
}
