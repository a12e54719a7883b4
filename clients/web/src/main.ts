// The reference web page: plays every registered variant through the generated TypeScript client
// over gRPC-Web (Envoy's grpc_web filter, same origin). The board is drawn by the page from the
// Game message (board.ts, laid out by layout.ts to fill the screen), played by pointer, finger
// or keyboard (input.ts); the legal moves come from the Game reply and every move is the
// server's to accept or refuse, in words. The player's page follows its own game through
// WatchGame, so a move made in another tab (or another device) updates this one's version and
// its next move is not refused as stale. Tokens and links: share.ts.
import "./style.css";
import {
  AccordionError,
  GameStatus,
  HintSource,
  MoveKind,
  SolveOutcome,
  ZoneKind,
  isTableau,
  type Game,
  type Move,
  type MoveInit,
  type NewGameResponse,
} from "@accordion/client/browser";
import { announceMove } from "./announce";
import { autoPlay } from "./auto";
import { drawBoard, decorate } from "./board";
import { wireBoard } from "./input";
import { dropMove, homeMove, stockMove } from "./moves";
import { PageError, newGameRequest, renderOptions, seedOf } from "./setup";
import { savedToken, saveToken, showLinks, wireShare } from "./share";
import { client, el, reducedMotion, state } from "./state";
import { resigned, statusData, statusWords } from "./status";
import { follow, spectate } from "./watch";

const board = el<HTMLDivElement>("board");
const variantSelect = el<HTMLSelectElement>("variant");
let solving: Move[] = []; // the solver's line, played a move at a time

const STATUS_WORD: Record<number, string> = {
  [GameStatus.IN_PROGRESS]: "in progress",
  [GameStatus.WON]: "won",
  [GameStatus.LOST]: "lost",
};

// --- errors in words --------------------------------------------------------------------------
function showError(err: unknown): void {
  const box = el("error");
  if (err instanceof PageError) {
    box.textContent = err.message;
    box.dataset["reason"] = err.reason;
  } else {
    const e = AccordionError.from(err);
    // The server's message, in the player's words; the reason stays for pages and tests.
    box.textContent = e.rawMessage || e.codeName;
    box.dataset["reason"] = e.reason || e.codeName;
  }
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

// --- variants and the New game panel ----------------------------------------------------------
const variantName = (id: string): string => state.variants.find((v) => v.id === id)?.name ?? id;

function nameTheGame(id: string): void {
  const name = variantName(id);
  el("title").textContent = name;
  document.title = `${name} · Accordion as a service`;
}

async function loadVariants(): Promise<void> {
  state.variants = await client.listVariants();
  for (const v of state.variants) variantSelect.add(new Option(v.name, v.id));
  variantSelect.addEventListener("change", () => {
    renderOptions();
    if (!state.game) nameTheGame(variantSelect.value);
  });
  renderOptions();
  if (!state.game) nameTheGame(variantSelect.value);
}

async function newGame(): Promise<void> {
  // A deal code pasted from a chat: its variant, options and cards (the form's are not sent,
  // since a code refuses options that differ from its own).
  const code = el<HTMLInputElement>("code").value.trim();
  seedOf(el<HTMLInputElement>("seed").value); // checked first, whichever is used
  started(await (code ? client.newGameFromCode(code) : client.newGame(newGameRequest())));
}

function showSetup(open: boolean): void {
  el("setup").hidden = !open;
  el("show-setup").setAttribute("aria-expanded", String(open));
  if (open) variantSelect.focus();
  if (state.game) redraw();
}

/** A game this page dealt (New game, or a deal link): keep its token here, play it, follow it. */
function started(reply: NewGameResponse): void {
  if (!reply.game) return;
  const id = reply.game.id;
  state.token = reply.token;
  saveToken(id, state.token);
  // The page's own link names the game only; the token stays in this browser.
  window.history.replaceState(null, "", `#game=${id}`);
  showLinks(id, reply.watchToken, reply.dealCode);
  el("play").hidden = false;
  el("setup").hidden = true;
  el("end-panel").hidden = true;
  setGame(reply.game);
  follow(id, setGame);
}

// --- the game ---------------------------------------------------------------------------------

/** Whether a card is hidden from the player (face down and not dealt open, or in a closed stock). */
function hidesCards(of: Game): boolean {
  if (!isTableau(of)) return of.stockSize > 0;
  return of.zones.some((z) => z.piles.some((p) => p.faceDown > p.faceDownCards.length));
}

function boardOptions(of: Game): { rowStock: boolean; wasteFan: number } {
  const variant = state.variants.find((v) => v.id === of.variant);
  return {
    // A row game's stock: only where the game deals from one (Accordion "dealing: stock").
    rowStock: !isTableau(of) && (of.stockSize > 0 || of.options["dealing"] === "stock"),
    wasteFan: Math.min(3, Number(of.options["draw"] ?? "1") || 1),
  };
}

function redraw(): void {
  if (state.game) drawBoard(board, state.game, boardOptions(state.game));
}

function setGame(next: Game): void {
  // An older answer, or one already shown (a move's reply and its WatchGame event both arrive):
  // drawing it again would drop the pile the player has just picked up.
  const was = state.game;
  if (was && was.id === next.id && next.version <= was.version) return;
  if (!was || was.id !== next.id) state.startedAt = Date.now();
  state.game = next;
  state.selected = null;
  state.hinted = undefined;
  nameTheGame(next.variant);
  const status = el("status");
  status.textContent = statusWords(next);
  statusData(status, next);
  status.dataset["status"] = STATUS_WORD[next.status] ?? "";
  status.dataset["version"] = String(next.version);
  el("move-count").textContent = String(next.movesPlayed);
  el("stats").hidden = false;
  const over = next.status !== GameStatus.IN_PROGRESS;
  el<HTMLButtonElement>("undo").disabled = !next.canUndo;
  el<HTMLButtonElement>("resign").disabled = over;
  el<HTMLButtonElement>("hint").disabled = over || next.legalMoves.length === 0;
  // Solve searches positions with every card known: a hidden card (a face-down one, the stock)
  // is never looked at, so the button says why it cannot help.
  const canOpen = state.variants.find((v) => v.id === next.variant)?.options.some((o) => o.name === "open") ?? false;
  const why = over || !hidesCards(next) ? "" : `Solve needs every card face up${canOpen ? " (deal an open game: New, “Deal face up”)" : ": this game hides cards"}.`;
  const solve = el<HTMLButtonElement>("solve");
  solve.disabled = over || why !== "";
  el("solve-why").textContent = why;
  renderMoves();
  drawBoard(board, next, boardOptions(next));
  showEnd(next, was);
  if (!over && !state.readonly && solving.length === 0) void autoPlay(next, play);
}

/** The win/loss panel, once, when the game ends (a spectator sees it too, without the buttons). */
function showEnd(next: Game, was: Game | undefined): void {
  const panel = el("end-panel");
  const over = next.status !== GameStatus.IN_PROGRESS;
  if (!over) {
    panel.hidden = true;
    return;
  }
  if (was && was.id === next.id && was.status === next.status) return;
  el("end-title").textContent = next.status === GameStatus.WON ? "You won!" : resigned(next) ? "Resigned" : "No more moves: lost";
  el("end-words").textContent = `${variantName(next.variant)} · ${next.movesPlayed} moves · ${clockText()} · score ${next.penalty}`;
  el("end-actions").hidden = state.readonly;
  panel.hidden = false;
  if (!state.readonly) el("end-new").focus({ preventScroll: true }); // the keyboard's next step
}

function clockText(): string {
  const s = Math.floor((Date.now() - state.startedAt) / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

setInterval(() => {
  if (state.game?.status === GameStatus.IN_PROGRESS) el("clock").textContent = clockText();
}, 1000);

function renderMoves(): void {
  const box = el("moves");
  box.replaceChildren();
  el("moves-box").hidden = state.readonly || !state.game;
  for (const move of state.game?.legalMoves ?? []) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = move.notation;
    button.dataset["notation"] = move.notation;
    button.dataset["from"] = String(move.fromPile);
    button.dataset["to"] = String(move.toPile);
    if (move.kind === MoveKind.MOVE) {
      button.dataset["fromZone"] = String(ZoneKind[move.fromZone]).toLowerCase();
      button.dataset["toZone"] = String(ZoneKind[move.toZone]).toLowerCase();
      button.dataset["count"] = String(move.count);
    }
    if (state.hinted && state.hinted.notation === move.notation) button.classList.add("hinted");
    button.addEventListener("click", () => void play(move));
    box.append(button);
  }
}

async function play(move: MoveInit): Promise<void> {
  const current = state.game;
  if (!current || state.readonly) return;
  await attempt(async () => {
    const reply = await client.move(current.id, move, { expectedVersion: current.version });
    if (reply.game) {
      setGame(reply.game);
      announceMove(current, move, reply.game);
    }
  });
}

wireBoard(board, () => state.game, {
  drop(from, to) {
    const game = state.game;
    if (!game) return;
    try {
      const move = dropMove(game, from, to);
      if (move) void play(move);
    } catch (err) {
      showError(err);
    }
  },
  stock() {
    const game = state.game;
    // Not legal now: ask anyway (the row games' DEAL, a tableau game's DRAW), refused in words.
    if (game) void play(stockMove(game) ?? { kind: isTableau(game) ? MoveKind.DRAW : MoveKind.DEAL });
  },
  home(from) {
    const move = state.game && homeMove(state.game, from);
    if (move) void play(move);
  },
  picked: clearError,
});

let resizing = 0;
window.addEventListener("resize", () => {
  window.clearTimeout(resizing);
  resizing = window.setTimeout(redraw, 100);
});

// --- buttons and keys -------------------------------------------------------------------------
const undo = (): Promise<void> =>
  attempt(async () => {
    const game = state.game;
    if (!game || !game.canUndo) return;
    solving = [];
    const reply = await client.undo(game.id, { expectedVersion: game.version });
    if (reply.game) setGame(reply.game);
  });

const hint = (): Promise<void> =>
  attempt(async () => {
    const game = state.game;
    if (!game || game.status !== GameStatus.IN_PROGRESS) return;
    const reply = await client.hint(game.id);
    state.hinted = reply.move;
    const source = reply.source === HintSource.SOLVER ? "the solver" : "a look at the visible cards";
    el("status").textContent = state.hinted ? `Hint: ${state.hinted.notation} (from ${source})` : "No hint: the game is over.";
    el("announce").textContent = el("status").textContent; // heard too (the board marks the piles)
    renderMoves();
    decorate(board);
  });

/** Solve: the solver's line, played on the board a move at a time (Stop, or any move, ends it). */
async function solve(): Promise<void> {
  if (solving.length) {
    solving = [];
    return;
  }
  await attempt(async () => {
    const game = state.game;
    if (!game) return;
    const reply = await client.raw.solve({ gameId: game.id }, { headers: { authorization: `Bearer ${state.token}` } }).catch((err: unknown) => {
      throw AccordionError.from(err);
    });
    if (reply.outcome !== SolveOutcome.WON) {
      el("status").textContent = reply.outcome === SolveOutcome.LOST ? "Solver: no win from here (proven)." : "Solver: no answer within its budget.";
      return;
    }
    solving = [...reply.moves];
    const total = solving.length;
    el("solve").textContent = "Stop";
    while (solving.length && state.game?.status === GameStatus.IN_PROGRESS) {
      const next = solving.shift()!;
      el("status").textContent = `Solver: move ${total - solving.length} of ${total}: ${next.notation}`;
      await play({ notation: next.notation });
      if (!el("error").hidden) break;
      await new Promise((resolve) => setTimeout(resolve, reducedMotion() ? 50 : 350));
    }
    solving = [];
    el("solve").textContent = "Solve";
  });
}

const drawFromStock = (): void => {
  const game = state.game;
  const move = game && stockMove(game);
  if (move) void play(move);
};

el("new-game").addEventListener("click", () => void attempt(newGame));
el("show-setup").addEventListener("click", () => showSetup(el("setup").hidden));
el("undo").addEventListener("click", () => void undo());
el("hint").addEventListener("click", () => void hint());
el("solve").addEventListener("click", () => void solve());
el("resign").addEventListener("click", () =>
  void attempt(async () => {
    const game = state.game;
    if (!game || game.status !== GameStatus.IN_PROGRESS) return;
    if (!window.confirm("Resign this game? It ends lost with its penalty (Undo takes it back).")) return;
    const reply = await client.resign(game.id, { expectedVersion: game.version });
    if (reply.game) setGame(reply.game);
  }),
);
el("play-notation").addEventListener("click", () => {
  const text = el<HTMLInputElement>("notation").value.trim();
  if (text) void play({ notation: text });
});
el("end-new").addEventListener("click", () =>
  void attempt(async () => {
    const game = state.game;
    if (!game) return;
    started(await client.newGame({ variant: game.variant, options: { ...game.options } }));
  }),
);
el("end-replay").addEventListener("click", () =>
  void attempt(async () => {
    if (state.dealCode) started(await client.newGameFromCode(state.dealCode));
  }),
);
el("end-share").addEventListener("click", () => el<HTMLDialogElement>("share-dialog").showModal());
el("end-close").addEventListener("click", () => (el("end-panel").hidden = true));
el("rotate-watch").addEventListener("click", () =>
  void attempt(async () => {
    if (!state.game) return;
    const shared = await client.shareGame(state.game.id, { rotate: true });
    showLinks(state.game.id, shared.watchToken, shared.dealCode);
    el("status").textContent = "New spectator link: the old one no longer works.";
  }),
);
wireShare();

// The shortcuts listed on the page: u or z (Ctrl+Z) undo, h hint, d or Space draw, Esc put down.
document.addEventListener("keydown", (event) => {
  const target = event.target as Element;
  if (state.readonly || !state.game || target.closest("input, select, textarea, dialog, summary") || event.altKey || event.metaKey) return;
  if (target.closest("button") && (event.key === " " || event.key === "Enter")) return;
  const k = event.key.toLowerCase();
  if (event.ctrlKey && k !== "z") return;
  if (k === "u" || k === "z") void undo();
  else if (k === "h") void hint();
  else if (k === "d" || k === " ") drawFromStock();
  else if (k === "escape") {
    state.selected = null;
    decorate(board);
  } else return;
  event.preventDefault();
});

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
    if (gameId && watchWith) {
      el("setup").hidden = true;
      el("play").hidden = true;
      el("spectating").hidden = false;
      el("keys").hidden = true; // a spectator plays nothing
      await attempt(loadVariants);
      return spectate(gameId, watchWith, setGame, showError);
    }
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
    state.token = linkToken || savedToken(reopen);
    if (!state.token) {
      showError(new PageError("NO_TOKEN", "This browser holds no token for that game: ask its player for the spectator link."));
      return;
    }
    if (linkToken && !savedToken(reopen)) saveToken(reopen, linkToken);
    if (linkToken) window.history.replaceState(null, "", `#game=${reopen}`); // the token leaves the address bar
    client.setToken(reopen, state.token);
    await attempt(async () => {
      const current = await client.getGame(reopen);
      el("play").hidden = false;
      el("setup").hidden = true;
      setGame(current);
      follow(reopen, setGame);
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
