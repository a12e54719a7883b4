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
// Tokens and links (issue 29). The player's token stays in this browser: localStorage, keyed by
// game id; the page's own URL is "#game=<id>" and reopens the game in any tab of this browser.
// The Share dialog gives what others may have: the deal code and "#deal=<code>" (the same cards
// as a new game for whoever opens it, hidden cards still hidden), and the spectator link
// "#watch=<id>.<watch token>", which carries only the read-only watch token: the page opened from
// it has no controls, and the server refuses any change made with that token (WATCH_ONLY). The
// link with the play token ("#game=<id>&token=<token>", to play on another device) is shown only
// when the player asks for it. Every link lives in the URL fragment, which browsers never send
// to a server, so no token reaches an access log.
// The player's page follows its own game through WatchGame, so a move made in another tab (or
// another device) updates this one's version and its next move is not refused as stale.
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
  type NewGameResponse,
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
let following: AbortController | undefined; // the WatchGame stream the player's page follows

// --- the player's token: in this browser only ---------------------------------------------------
const TOKEN_KEY = (gameId: string): string => `accordion:token:${gameId}`;

function savedToken(gameId: string): string {
  try {
    return window.localStorage.getItem(TOKEN_KEY(gameId)) ?? "";
  } catch {
    return ""; // storage refused (a private window's policy): the token lives in this page only
  }
}

function saveToken(gameId: string, value: string): void {
  try {
    window.localStorage.setItem(TOKEN_KEY(gameId), value);
  } catch {
    // as above
  }
}

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
  // A deal code pasted from a chat: its variant, options and cards (the form's are not sent,
  // since a code refuses options that differ from its own).
  const code = el<HTMLInputElement>("code").value.trim();
  started(await (code ? client.newGameFromCode(code) : client.newGame(newGameRequest())));
}

/** A game this page dealt (New game, or a deal link): keep its token here, play it, follow it. */
function started(reply: NewGameResponse): void {
  if (!reply.game) return;
  const id = reply.game.id;
  token = reply.token;
  saveToken(id, token);
  // The page's own link names the game only; the token stays in this browser.
  window.history.replaceState(null, "", `#game=${id}`);
  showLinks(id, reply.watchToken, reply.dealCode);
  el("play").hidden = false;
  setGame(reply.game);
  follow(id);
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
  // An older answer, or one already shown (a move's reply and its WatchGame event both arrive):
  // drawing it again would drop the pile the player has just picked up.
  if (game && game.id === next.id && next.version <= game.version) return;
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
el("share").addEventListener("click", () => el<HTMLDialogElement>("share-dialog").showModal());
el("share-close").addEventListener("click", () => el<HTMLDialogElement>("share-dialog").close());
el("spectate").addEventListener("click", () => copyLink("spectator-link"));
el("copy-deal").addEventListener("click", () => copyLink("deal-link"));
el("copy-spectator").addEventListener("click", () => copyLink("spectator-link"));
el("reveal-play-link").addEventListener("click", () => {
  // Only when the player asks: this link is the game itself (whoever has it can play).
  if (!game) return;
  const a = el<HTMLAnchorElement>("play-link");
  a.href = `${pageBase()}#game=${game.id}&token=${token}`;
  a.textContent = a.href;
  el("play-link-box").hidden = false;
});
el("rotate-watch").addEventListener("click", () =>
  void attempt(async () => {
    if (!game) return;
    const shared = await client.shareGame(game.id, { rotate: true });
    showLinks(game.id, shared.watchToken, shared.dealCode);
    el("status").textContent = "New spectator link: the old one no longer works.";
  }),
);

const pageBase = (): string => `${window.location.origin}${window.location.pathname}`;

/** The Share dialog's links: the deal (for anyone) and the spectator's (read-only); no play token. */
function showLinks(gameId: string, watch: string, code: string): void {
  el("deal-code").textContent = code || "(none)";
  const deal = el<HTMLAnchorElement>("deal-link");
  deal.href = `${pageBase()}#deal=${code}`;
  deal.textContent = deal.href;
  const spectator = el<HTMLAnchorElement>("spectator-link");
  spectator.href = `${pageBase()}#watch=${gameId}.${watch}`;
  spectator.textContent = spectator.href;
  el("play-link-box").hidden = true;
  el<HTMLAnchorElement>("play-link").removeAttribute("href");
  el("play-link").textContent = "";
}

function copyLink(id: string): void {
  const link = document.getElementById(id) as HTMLAnchorElement | null;
  if (!link) return;
  void navigator.clipboard?.writeText(link.href).catch(() => undefined);
  el("status").textContent = `Link copied: ${link.href}`;
}

// --- following the player's own game ------------------------------------------------------------
/**
 * Follows the game through WatchGame while this page plays it, so a move from another tab or
 * device updates this page (its version, its legal moves) before its next move is sent.
 */
function follow(gameId: string): void {
  following?.abort();
  const abort = new AbortController();
  following = abort;
  void (async () => {
    while (!abort.signal.aborted && game?.id === gameId) {
      try {
        for await (const event of client.watch(gameId, game?.version ?? 0n, abort.signal)) {
          if (event.game && game?.id === gameId) setGame(event.game);
        }
      } catch (err) {
        if (abort.signal.aborted) return;
        const reason = AccordionError.from(err).reason;
        if (reason === "GAME_NOT_FOUND" || reason === "MISSING_TOKEN") return; // nothing to follow
      }
      await new Promise((resolve) => setTimeout(resolve, 1000)); // the stream ended: reconnect
    }
  })();
}

// --- spectating -------------------------------------------------------------------------------
async function spectate(gameId: string, watch: string): Promise<void> {
  readonly = true;
  token = watch; // the pictures are fetched with it; it can read, never play
  const watcher = client.watcher(gameId, watch);
  el("setup").hidden = true;
  el("play").hidden = true;
  el("variant-help").hidden = true;
  el("spectating").hidden = false;
  let after = 0n;
  for (;;) {
    try {
      const current = await watcher.getGame();
      setGame(current);
      after = current.version;
      for await (const event of watcher.watch(after)) {
        if (event.game) setGame(event.game);
      }
    } catch (err) {
      showError(err);
      // A rotated watch token (or an expired game) opens nothing: asking again would not help.
      if (AccordionError.from(err).reason === "GAME_NOT_FOUND") return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the stream ended: reconnect
  }
}

// --- start ------------------------------------------------------------------------------------
async function start(): Promise<void> {
  const params = new URLSearchParams(window.location.hash.slice(1));
  const watch = params.get("watch");
  const reopen = params.get("game");
  const deal = params.get("deal");
  const linkToken = params.get("token") ?? "";
  if (watch) {
    // "#watch=<id>.<watch token>" (an older link: "#watch=<id>&token=<token>").
    const dot = watch.indexOf(".");
    const [gameId, watchWith] = dot < 0 ? [watch, linkToken] : [watch.slice(0, dot), watch.slice(dot + 1)];
    if (gameId && watchWith) return spectate(gameId, watchWith);
  }
  await attempt(loadVariants);
  if (deal) {
    // A deal link: the same cards as a new game of this page's own (its own id and token).
    await attempt(async () => started(await client.newGameFromCode(deal)));
    return;
  }
  if (reopen) {
    // A token in the link (the player asked for that link) is used here; kept in this browser
    // unless one is kept already, so a link cannot replace the token this browser plays with.
    token = linkToken || savedToken(reopen);
    if (!token) {
      const box = el("error");
      box.textContent = "This browser holds no token for that game: ask its player for the spectator link.";
      box.dataset["reason"] = "NO_TOKEN";
      box.hidden = false;
      return;
    }
    if (linkToken && !savedToken(reopen)) saveToken(reopen, linkToken);
    if (linkToken) window.history.replaceState(null, "", `#game=${reopen}`); // the token leaves the address bar
    client.setToken(reopen, token);
    await attempt(async () => {
      const current = await client.getGame(reopen);
      el("play").hidden = false;
      setGame(current);
      follow(reopen);
    });
    try {
      const shared = await client.shareGame(reopen);
      showLinks(reopen, shared.watchToken, shared.dealCode);
    } catch {
      // Not the player's token (a watch token in a #game= link: WATCH_ONLY): no links to share,
      // and every move it tries is refused by the server, in words.
    }
  }
}

void start();
