// The reference web page: plays every registered variant through the generated TypeScript client
// over gRPC-Web (Envoy's grpc_web filter, same origin). The layout is the server's own picture
// (GetGamePicture: one SVG renderer for the page and for chat bots), shown inline and made
// clickable through its data-pile / data-zone hooks; the legal moves come from the Game reply.
// A tableau game (Klondike, Spider, …) is drawn by zones (foundations, tableau, waste, stock;
// face-down cards as backs): a pile is picked up and put down by zone and number, a click on a
// face-up card of a tableau pile picks up the cards from it to the top, a double click sends a
// card to the foundations, and a click on the stock draws (Spider: deals; Klondike's empty
// stock: redeals).
//
// Links: "#game=<id>&token=<token>" reopens a game to play it; "#watch=<id>&token=<token>"
// spectates it live (WatchGame) with no controls. Both live in the URL fragment, which browsers
// never send to a server, so the token reaches no access log. WatchGame needs the game's token
// today (every RPC on a game does), so the spectator link carries it: the page shows no controls,
// but whoever holds that link could play. A read-only watch token is a contract change for later.
import "./style.css";
import {
  AccordionError,
  GameStatus,
  HintSource,
  MoveKind,
  SolveOutcome,
  ZoneKind,
  createBrowserClient,
  isTableau,
  tableauMove,
  type Game,
  type Move,
  type MoveInit,
  type NewGameInit,
  type Variant,
} from "@accordion/client/browser";

const client = createBrowserClient(window.location.origin);

function el<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`#${id} is missing from the page`);
  return found as T;
}

const board = el<HTMLDivElement>("board");
const variantSelect = el<HTMLSelectElement>("variant");

let variants: Variant[] = [];
let game: Game | undefined;
let token = "";
/** A pile of the picture: its zone ("row" in row games) and its number (1-based, as in the notation). */
interface Spot {
  zone: string;
  pile: number;
  count?: number; // a tableau pile picked up at one of its face-up cards: the cards from it up
}
let selected: Spot | null = null; // the pile picked up, waiting for its target
let dragFrom: Spot | null = null;
let hinted: Move | undefined;
let readonly = false;
let pictureSeq = 0; // only the newest picture request draws

const STATUS_WORD: Record<number, string> = {
  [GameStatus.IN_PROGRESS]: "in progress",
  [GameStatus.WON]: "won",
  [GameStatus.LOST]: "lost",
};

// --- errors in words --------------------------------------------------------------------------
function showError(err: unknown): void {
  const e = AccordionError.from(err);
  const box = el("error");
  // The ErrorInfo reason and the server's message, e.g. "ILLEGAL_MOVE: 3S cannot go on 9H ...".
  box.textContent = `${e.reason || e.codeName}: ${e.rawMessage}`;
  box.dataset["reason"] = e.reason || e.codeName;
  box.hidden = false;
}

function clearError(): void {
  el("error").hidden = true;
  el("error").textContent = "";
}

async function attempt(run: () => Promise<void>): Promise<void> {
  clearError();
  try {
    await run();
  } catch (err) {
    showError(err);
  }
}

// --- variants and options ---------------------------------------------------------------------
function renderOptions(): void {
  const variant = variants.find((v) => v.id === variantSelect.value);
  const box = el("options");
  box.replaceChildren();
  if (!variant) return;
  for (const option of variant.options) {
    const label = document.createElement("label");
    label.title = option.description;
    label.append(`${option.name} `);
    const range = option.allowedValues.length === 1 ? /^(\d+)\.\.(\d+)$/.exec(option.allowedValues[0] ?? "") : null;
    let input: HTMLInputElement | HTMLSelectElement;
    if (range) {
      input = document.createElement("input");
      input.type = "number";
      input.min = range[1] ?? "";
      input.max = range[2] ?? "";
      input.value = option.defaultValue;
      input.style.width = "4em";
    } else {
      input = document.createElement("select");
      for (const value of option.allowedValues) input.add(new Option(value, value, false, value === option.defaultValue));
    }
    input.dataset["option"] = option.name;
    input.id = `option-${option.name}`;
    label.append(input);
    box.append(label);
  }
  el("variant-help").textContent = `${variant.name}: ${variant.description} Win: ${variant.winThreshold}.`;
}

async function loadVariants(): Promise<void> {
  variants = await client.listVariants();
  for (const v of variants) variantSelect.add(new Option(v.name, v.id));
  variantSelect.addEventListener("change", renderOptions);
  renderOptions();
}

function newGameRequest(): NewGameInit {
  const options: Record<string, string> = {};
  for (const input of el("options").querySelectorAll<HTMLInputElement | HTMLSelectElement>("[data-option]")) {
    options[input.dataset["option"] ?? ""] = input.value;
  }
  const seed = el<HTMLInputElement>("seed").value.trim();
  const deal = el<HTMLInputElement>("deal").value.trim();
  const request: NewGameInit = { variant: variantSelect.value, options };
  if (deal) request.start = { case: "deal", value: { cards: deal.split(/[\s,]+/) } };
  else if (seed) request.start = { case: "seed", value: BigInt(seed) };
  return request;
}

async function newGame(): Promise<void> {
  const reply = await client.newGame(newGameRequest());
  token = reply.token;
  if (!reply.game) return;
  window.history.replaceState(null, "", `#game=${reply.game.id}&token=${token}`);
  showLinks(reply.game.id);
  el("play").hidden = false;
  setGame(reply.game);
}

// --- the game ---------------------------------------------------------------------------------
function authHeaders(): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** Whether the game ended by RESIGN: a resigned game's state string ends with "resigned". */
function resigned(of: Game): boolean {
  return of.status === GameStatus.LOST && of.state.endsWith(" resigned");
}

function setGame(next: Game): void {
  if (game && game.id === next.id && next.version < game.version) return; // an older answer
  game = next;
  selected = null;
  hinted = undefined;
  const status = el("status");
  const faceDown = next.zones.find((z) => z.kind === ZoneKind.TABLEAU)?.piles.reduce((n, p) => n + p.faceDown, 0) ?? 0;
  const words = [
    next.variant,
    `version ${next.version}`,
    resigned(next) ? "lost (resigned)" : (STATUS_WORD[next.status] ?? ""),
    `penalty ${next.penalty}`,
    isTableau(next) ? `${faceDown} face down` : `${next.piles.length} piles`,
    `stock ${next.stockSize}`,
  ];
  status.textContent = words.join(" · ");
  status.dataset["status"] = STATUS_WORD[next.status] ?? "";
  status.dataset["version"] = String(next.version);
  el<HTMLButtonElement>("undo").disabled = !next.canUndo;
  el<HTMLButtonElement>("resign").disabled = next.status !== GameStatus.IN_PROGRESS;
  // Solve searches face-up positions only: the server refuses a game with cards in the stock.
  const solve = el<HTMLButtonElement>("solve");
  solve.disabled = next.stockSize > 0 || next.status !== GameStatus.IN_PROGRESS;
  solve.title = next.stockSize > 0 ? "The solver never looks at the hidden stock" : "";
  renderMoves();
  void drawPicture(next);
}

async function drawPicture(of: Game): Promise<void> {
  const seq = ++pictureSeq;
  try {
    const body = await client.raw.getGamePicture({ gameId: of.id }, { headers: authHeaders() });
    if (seq !== pictureSeq) return;
    const doc = new DOMParser().parseFromString(new TextDecoder().decode(body.data), "image/svg+xml");
    const svg = document.importNode(doc.documentElement, true);
    svg.dataset["version"] = String(of.version);
    board.replaceChildren(svg);
    decorate();
  } catch (err) {
    showError(err);
  }
}

const ZONE_NAME: Record<number, string> = {
  [ZoneKind.TABLEAU]: "tableau",
  [ZoneKind.FOUNDATION]: "foundation",
  [ZoneKind.STOCK]: "stock",
  [ZoneKind.WASTE]: "waste",
};
const ZONE_OF: Record<string, ZoneKind> = {
  tableau: ZoneKind.TABLEAU,
  foundation: ZoneKind.FOUNDATION,
  stock: ZoneKind.STOCK,
  waste: ZoneKind.WASTE,
};
const key = (spot: Spot): string => `${spot.zone}:${spot.pile}`;

/** The piles a move takes cards from and puts them on (a Wish pair: its two piles), if any. */
function ends(m: Move): [Spot, Spot] | null {
  if (m.kind === MoveKind.STACK || m.kind === MoveKind.CLAIM) {
    return [{ zone: "row", pile: m.fromPile }, { zone: "row", pile: m.toPile }];
  }
  if (m.kind === MoveKind.MOVE) {
    return [{ zone: ZONE_NAME[m.fromZone] ?? "", pile: m.fromPile }, { zone: ZONE_NAME[m.toZone] ?? "", pile: m.toPile }];
  }
  if (m.kind === MoveKind.REMOVE && game && isTableau(game) && m.positions.length === 2) {
    return [{ zone: "tableau", pile: m.positions[0] ?? 0 }, { zone: "tableau", pile: m.positions[1] ?? 0 }];
  }
  return null;
}

/** The legal moves between two piles, either way for a Wish pair (which has no direction). */
function movesBetween(from: Spot, to: Spot): Move[] {
  const found: Move[] = [];
  for (const m of game?.legalMoves ?? []) {
    const e = ends(m);
    if (!e) continue;
    const [a, b] = e;
    const sameTarget = key(b) === key(to) || (b.zone === "foundation" && to.zone === "foundation");
    if ((key(a) === key(from) && sameTarget) || (m.kind === MoveKind.REMOVE && key(b) === key(from) && key(a) === key(to))) {
      found.push(m);
    }
  }
  return found;
}

/** Marks the legal moves on the picture: piles that can move, the one picked up, its targets. */
function decorate(): void {
  const movable = new Set<string>();
  const targets = new Set<string>();
  for (const m of game?.legalMoves ?? []) {
    if (m.kind === MoveKind.REMOVE && !(game && isTableau(game))) m.positions.forEach((p) => movable.add(`row:${p}`));
    const e = ends(m);
    if (!e) continue;
    movable.add(key(e[0]));
    if (m.kind === MoveKind.REMOVE) movable.add(key(e[1]));
    if (selected && key(e[0]) === key(selected)) targets.add(key(e[1]));
    if (selected && m.kind === MoveKind.REMOVE && key(e[1]) === key(selected)) targets.add(key(e[0]));
  }
  const hintedEnds = hinted ? ends(hinted) : null;
  const hintedKeys = new Set(hintedEnds ? hintedEnds.map(key) : []);
  for (const g of board.querySelectorAll<SVGGElement>("g.pile")) {
    const here = key(spotOf(g));
    g.classList.toggle("movable", !readonly && movable.has(here));
    g.classList.toggle("selected", selected !== null && here === key(selected));
    g.classList.toggle("target", targets.has(here));
    g.classList.toggle("hinted", hintedKeys.has(here));
  }
  board.querySelector("g.stock")?.classList.toggle("movable", !readonly && stockMove() !== undefined);
  board.classList.toggle("readonly", readonly);
}

/** What a click on the stock plays, when legal: DRAW, DEAL (row games, Spider) or REDEAL (Klondike). */
function stockMove(): Move | undefined {
  const moves = game?.legalMoves ?? [];
  for (const kind of [MoveKind.DRAW, MoveKind.DEAL, MoveKind.REDEAL]) {
    const found = moves.find((m) => m.kind === kind);
    if (found) return found;
  }
  return undefined;
}

function renderMoves(): void {
  const box = el("moves");
  box.replaceChildren();
  el("moves-box").hidden = readonly || !game;
  for (const move of game?.legalMoves ?? []) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = move.notation;
    button.dataset["notation"] = move.notation;
    button.dataset["from"] = String(move.fromPile);
    button.dataset["to"] = String(move.toPile);
    if (move.kind === MoveKind.MOVE) {
      button.dataset["fromZone"] = ZONE_NAME[move.fromZone] ?? "";
      button.dataset["toZone"] = ZONE_NAME[move.toZone] ?? "";
      button.dataset["count"] = String(move.count);
    }
    if (hinted && hinted.notation === move.notation) button.classList.add("hinted");
    button.addEventListener("click", () => void play(move));
    box.append(button);
  }
}

async function play(move: MoveInit): Promise<void> {
  const current = game;
  if (!current || readonly) return;
  await attempt(async () => {
    const reply = await client.move(current.id, move, { expectedVersion: current.version });
    if (reply.game) setGame(reply.game);
  });
}

/** A pile released on another (a click on each, or a drag): the legal move between them, or
 * the move as asked, which the server refuses in words when it is illegal. Of several legal
 * counts (a run in part), the one picked up at, else the longest (as the notation's `3>7`). */
function moveBetween(from: Spot, to: Spot): void {
  const legal = movesBetween(from, to);
  const chosen =
    legal.find((m) => m.kind === MoveKind.STACK) ??
    legal.find((m) => from.count !== undefined && m.count === from.count) ??
    legal.reduce<Move | undefined>((best, m) => (best && best.count >= m.count ? best : m), undefined);
  selected = null;
  decorate();
  if (chosen) return void play(chosen);
  if (from.zone === "row") return void play({ kind: MoveKind.STACK, fromPile: from.pile, toPile: to.pile });
  const [fromZone, toZone] = [ZONE_OF[from.zone], ZONE_OF[to.zone]];
  if (fromZone === undefined || toZone === undefined) return;
  try {
    void play(tableauMove(fromZone, from.pile, toZone, to.pile, from.count ?? 1));
  } catch (err) {
    showError(err);
  }
}

function spotOf(g: Element): Spot {
  const el = g as SVGGElement;
  return { zone: el.dataset["zone"] ?? "row", pile: Number(el.dataset["pile"]) };
}

/** The pile under a pointer; on a tableau pile's face-up card, with the count from it to the top. */
function pileAt(target: EventTarget | null): Spot | null {
  const hit = target as Element | null;
  const g = hit?.closest?.("g.pile");
  if (!g) return null;
  const spot = spotOf(g);
  const face = hit?.closest?.("g.card-face");
  if (spot.zone === "tableau" && face) {
    const faceUp = [...g.querySelectorAll("g.card-face")].filter((f) => !f.querySelector("rect.open-down"));
    const at = faceUp.indexOf(face);
    if (at >= 0) spot.count = faceUp.length - at;
  }
  return spot;
}

board.addEventListener("pointerdown", (event) => {
  if (readonly) return;
  dragFrom = pileAt(event.target);
});

board.addEventListener("pointerup", (event) => {
  if (readonly || !game) return;
  const to = pileAt(document.elementFromPoint(event.clientX, event.clientY) ?? event.target);
  const from = dragFrom;
  dragFrom = null;
  if (to === null) return;
  if (from !== null && key(from) !== key(to)) return moveBetween(from, to); // dragged onto a pile
  if (selected === null) {
    selected = to;
  } else if (key(selected) === key(to)) {
    selected = null;
  } else {
    return moveBetween(selected, to);
  }
  clearError();
  decorate();
});

board.addEventListener("click", (event) => {
  if (readonly || !game) return;
  if ((event.target as Element).closest("g.stock")) {
    // Not legal now: ask anyway (the row games' DEAL, a tableau game's DRAW), refused in words.
    void play(stockMove() ?? { kind: isTableau(game) ? MoveKind.DRAW : MoveKind.DEAL });
  }
});

// A double click on a tableau or waste pile sends its top card to the foundations, when legal.
board.addEventListener("dblclick", (event) => {
  if (readonly || !game || !isTableau(game)) return;
  const from = pileAt(event.target);
  if (!from) return;
  const home = movesBetween({ zone: from.zone, pile: from.pile }, { zone: "foundation", pile: 0 }).find((m) => m.count === 1);
  selected = null;
  if (home) void play(home);
});

// --- buttons ----------------------------------------------------------------------------------
el("new-game").addEventListener("click", () => void attempt(newGame));
el("undo").addEventListener("click", () =>
  void attempt(async () => {
    if (!game) return;
    const reply = await client.undo(game.id, { expectedVersion: game.version });
    if (reply.game) setGame(reply.game);
  }),
);
el("resign").addEventListener("click", () =>
  void attempt(async () => {
    if (!game || game.status !== GameStatus.IN_PROGRESS) return;
    if (!window.confirm("Resign this game? It ends lost with its penalty (Undo takes it back).")) return;
    const reply = await client.resign(game.id, { expectedVersion: game.version });
    if (reply.game) setGame(reply.game);
  }),
);
el("hint").addEventListener("click", () =>
  void attempt(async () => {
    if (!game) return;
    const reply = await client.hint(game.id);
    hinted = reply.move;
    const source = reply.source === HintSource.SOLVER ? "the solver" : "a look at the visible cards";
    el("status").textContent = hinted ? `Hint: ${hinted.notation} (from ${source})` : "No hint: the game is over.";
    renderMoves();
    decorate();
  }),
);
el("solve").addEventListener("click", () =>
  void attempt(async () => {
    if (!game) return;
    const reply = await client.raw.solve({ gameId: game.id }, { headers: authHeaders() }).catch((err: unknown) => {
      throw AccordionError.from(err);
    });
    const line = reply.moves.map((m) => m.notation).join(" ");
    el("status").textContent =
      reply.outcome === SolveOutcome.WON
        ? `Solver: a win in ${reply.moves.length} moves: ${line}`
        : reply.outcome === SolveOutcome.LOST
          ? "Solver: no win from here (proven)."
          : "Solver: no answer within its budget.";
  }),
);
el("play-notation").addEventListener("click", () => {
  const text = el<HTMLInputElement>("notation").value.trim();
  if (text) void play({ notation: text });
});
el("share").addEventListener("click", () => copyLink("share-link"));
el("spectate").addEventListener("click", () => copyLink("spectator-link"));

function showLinks(gameId: string): void {
  const base = `${window.location.origin}${window.location.pathname}`;
  const box = el("links");
  box.replaceChildren();
  for (const [id, text, hash] of [
    ["share-link", "Reopen this game", `#game=${gameId}&token=${token}`],
    ["spectator-link", "Watch it live (read-only)", `#watch=${gameId}&token=${token}`],
  ] as const) {
    const a = document.createElement("a");
    a.id = id;
    a.href = base + hash;
    a.textContent = text;
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    box.append(a, " ");
  }
}

function copyLink(id: string): void {
  const link = document.getElementById(id) as HTMLAnchorElement | null;
  if (!link) return;
  void navigator.clipboard?.writeText(link.href).catch(() => undefined);
  el("status").textContent = `Link copied: ${link.href}`;
}

// --- spectating -------------------------------------------------------------------------------
async function spectate(gameId: string): Promise<void> {
  readonly = true;
  el("setup").hidden = true;
  el("play").hidden = true;
  el("variant-help").hidden = true;
  el("spectating").hidden = false;
  let after = 0n;
  for (;;) {
    try {
      const current = await client.getGame(gameId);
      setGame(current);
      after = current.version;
      for await (const event of client.watch(gameId, after)) {
        if (event.game) setGame(event.game);
      }
    } catch (err) {
      showError(err);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the stream ended: reconnect
  }
}

// --- start ------------------------------------------------------------------------------------
async function start(): Promise<void> {
  const params = new URLSearchParams(window.location.hash.slice(1));
  const watch = params.get("watch");
  const reopen = params.get("game");
  token = params.get("token") ?? "";
  if (watch && token) {
    client.setToken(watch, token);
    return spectate(watch);
  }
  await attempt(loadVariants);
  if (reopen && token) {
    client.setToken(reopen, token);
    await attempt(async () => {
      const current = await client.getGame(reopen);
      showLinks(reopen);
      el("play").hidden = false;
      setGame(current);
    });
  }
}

void start();
