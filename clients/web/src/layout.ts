// Where each pile goes: a pure function of the piles and the space the page has, so the board
// fills the screen at any size from 360 px wide. Cards are sized from the viewport: as wide as
// the columns allow (at most MAX_W), never narrower than a touch target (MIN_W, 44 CSS px) —
// a game with more piles than fit side by side at that width (Spider's ten on a phone) wraps its
// tableau into balanced rows instead. Tableau games put stock, waste and foundations in a top
// line (foundations to the right, as in Klondike everywhere) and the tableau below; a fanned
// pile too tall for the space left has its fan squeezed, down to offsets that still show a
// card's corner (its rank and suit stay legible). On a phone (under PHONE_W wide) each face-up
// card's strip stays a touch target (MIN_W tall) however long the run: the page scrolls down
// instead (face-down strips are not picked, so they may stay thin).

export const MIN_W = 44;
const MAX_W = 120;
const MAX_W_ROW = 100;
export const RATIO = 1.4; // a card's height to its width
const LABEL_H = 16;
const PHONE_W = 600; // narrower than this, the board is for fingers // the pile numbers above tableau and row piles

/** A pile to place: its hook key ("zone:pile"), and for a fanned pile its face-down and face-up counts. */
export interface PileIn {
  key: string;
  down: number;
  up: number;
}

export interface BoardIn {
  width: number; // CSS px the board may use
  height: number; // CSS px visible below the board's top (the board may grow past it on a phone)
  top: PileIn[]; // stock and waste (left), then the foundations (right); empty for a row game
  wasteFan: number; // cards of the waste shown side by side (3 in draw-three)
  main: PileIn[]; // the tableau (fanned) or the row (stacked)
  fanned: boolean;
  stock: boolean; // a row game's stock (placed on a line of its own, above the row)
}

export interface Place {
  x: number;
  y: number;
  w: number;
  h: number;
  downStep: number; // fan offsets (0 for a stacked pile)
  upStep: number;
  label: boolean; // a pile number above it
}

export interface BoardOut {
  cardW: number;
  cardH: number;
  width: number;
  height: number;
  wasteStep: number;
  places: Map<string, Place>;
}

const gapFor = (width: number): number => (width < PHONE_W ? 4 : 10);

function maxColumns(width: number, gap: number): number {
  return Math.max(1, Math.floor((width + gap) / (MIN_W + gap)));
}

export function layoutBoard(b: BoardIn): BoardOut {
  return b.fanned || b.top.length ? tableauLayout(b) : rowLayout(b);
}

function tableauLayout(b: BoardIn): BoardOut {
  const gap = gapFor(b.width);
  const n = Math.max(1, b.main.length);
  const most = maxColumns(b.width, gap);
  const rows = Math.ceil(n / most);
  const cols = Math.ceil(n / rows);
  const byWidth = Math.floor((b.width - (cols - 1) * gap) / cols);
  const topUnits = b.top.length + (b.wasteFan > 1 ? 0.84 : 0);
  const topLines = Math.max(b.top.length ? 1 : 0, Math.ceil(topUnits / cols));
  // Tall enough for the top lines and tableau rows fanned to ~1.8 cards each.
  const byHeight = (b.height - topLines * gap - rows * (LABEL_H + gap)) / (RATIO * (topLines + 1.8 * rows));
  const w = Math.max(Math.min(MIN_W, byWidth), Math.floor(Math.min(MAX_W, byWidth, byHeight)));
  const h = Math.round(w * RATIO);
  const wasteStep = Math.round(w * 0.42); // a corner's width: "10♥" shows whole
  const places = new Map<string, Place>();
  const stacked = (x: number, y: number, pw = w): Place => ({ x, y, w: pw, h, downStep: 0, upStep: 0, label: false });
  const full = cols * w + (cols - 1) * gap;
  // The top line: stock and waste from the left, foundations from the right, wrapping as needed.
  let x = 0;
  let y = 0;
  const left = b.top.filter((p) => p.key.startsWith("stock") || p.key.startsWith("waste"));
  const right = b.top.filter((p) => !left.includes(p));
  for (const p of left) {
    const pw = p.key.startsWith("waste") ? w + wasteStep * (Math.max(1, b.wasteFan) - 1) : w;
    places.set(p.key, stacked(x, y, pw));
    x += pw + gap;
  }
  let room = Math.max(0, Math.floor((full - x + gap) / (w + gap)));
  let line = right.slice(0, room);
  let rest = right.slice(room);
  for (;;) {
    line.forEach((p, i) => places.set(p.key, stacked(full - (line.length - i) * (w + gap) + gap, y)));
    if (!rest.length) break;
    y += h + gap;
    room = cols;
    line = rest.slice(0, room);
    rest = rest.slice(room);
  }
  if (b.top.length) y += h + gap * 2;
  // The tableau, in balanced rows; each row's fans share the height left.
  const rowRoom = Math.max(h, (b.height - y) / rows - LABEL_H - gap);
  const minUp = b.width < PHONE_W ? MIN_W : 0;
  for (let r = 0; r < rows; r++) {
    let rowH = h;
    const these = b.main.slice(r * cols, (r + 1) * cols);
    these.forEach((p, i) => {
      const fan = fanSteps(p, w, h, rowRoom, minUp);
      const ph = h + Math.max(0, p.down) * fan.down + Math.max(0, p.up - 1) * fan.up;
      places.set(p.key, { x: i * (w + gap), y: y + LABEL_H, w, h: ph, downStep: fan.down, upStep: fan.up, label: true });
      rowH = Math.max(rowH, ph);
    });
    y += LABEL_H + rowH + gap;
  }
  return { cardW: w, cardH: h, width: full, height: y, wasteStep, places };
}

/** A fanned pile's offsets: roomy when there is space, squeezed to fit, never below a corner's
 * height nor below `minUp` (a touch target) for a face-up card. */
function fanSteps(p: PileIn, w: number, h: number, room: number, minUp: number): { down: number; up: number } {
  let down = Math.round(h * 0.12);
  let up = Math.max(minUp, Math.round(h * 0.28));
  const need = h + p.down * down + Math.max(0, p.up - 1) * up;
  if (need > room) {
    const scale = (room - h) / (need - h);
    down = Math.max(Math.round(h * 0.06), Math.floor(down * scale));
    up = Math.max(minUp, cornerHeight(w) + 2, Math.floor(up * scale));
  }
  return { down, up };
}

/** The height of a card's printed corner (rank over suit), which an overlapped card keeps visible. */
export function cornerHeight(w: number): number {
  return Math.round(Math.max(12, w * 0.26));
}

/** A row game is sized for a whole deck's row, whatever is left of it: the columns (and the
 * cards' size) stay put as piles go, so a move slides only the piles after it. */
const ROW_SLOTS = 52;

function rowLayout(b: BoardIn): BoardOut {
  const gap = gapFor(b.width);
  const n = Math.max(ROW_SLOTS, b.main.length);
  const most = Math.min(n, maxColumns(b.width, gap));
  let best = { cols: most, w: 0 };
  for (let cols = most; cols >= 1; cols--) {
    const byWidth = Math.min(MAX_W_ROW, (b.width - (cols - 1) * gap) / cols);
    const lines = Math.ceil(n / cols) + (b.stock ? 1 : 0);
    const byHeight = (b.height - lines * (LABEL_H + gap)) / (lines * RATIO);
    const w = Math.min(byWidth, byHeight);
    if (w > best.w + 0.5) best = { cols, w };
  }
  const cols = best.cols;
  const w = Math.floor(Math.max(best.w, Math.min(MIN_W, (b.width - (cols - 1) * gap) / cols)));
  const h = Math.round(w * RATIO);
  const places = new Map<string, Place>();
  let y = 0;
  if (b.stock) {
    places.set("stock:1", { x: 0, y, w, h, downStep: 0, upStep: 0, label: false });
    y += h + gap * 2;
  }
  b.main.forEach((p, i) => {
    const col = i % cols;
    const line = Math.floor(i / cols);
    places.set(p.key, { x: col * (w + gap), y: y + line * (LABEL_H + h + gap) + LABEL_H, w, h, downStep: 0, upStep: 0, label: true });
  });
  const lines = Math.ceil(b.main.length / cols);
  y += lines * (LABEL_H + h + gap);
  return { cardW: w, cardH: h, width: cols * w + (cols - 1) * gap, height: y, wasteStep: 0, places };
}
