/**
 * A small typed client over the generated `AccordionService` descriptor: gRPC over HTTP/2 from
 * Node (`@connectrpc/connect-node`), the game token sent as `authorization: Bearer <token>` by an
 * interceptor, and failures thrown as `AccordionError`.
 *
 * ```ts
 * const client = createAccordionClient("127.0.0.1:50051"); // or "http://…", "https://…"
 * const { game } = await client.newGame({ variant: "accordion", seed: 7n });
 * const { game: after } = await client.play(game.id, "10D>4D");
 * client.close();
 * ```
 *
 * The client remembers the token `newGame` returns, by game id; `setToken` adds one for a game
 * created elsewhere. Sharing: `newGame`'s reply carries the game's `watchToken` (read-only) and
 * `dealCode` (the same cards for anyone, hidden cards still hidden); `newGameFromCode(code)` deals
 * a code; `shareGame(id)` fetches both (and rotates the watch token); `watcher(id, watchToken)`
 * is a handle that can only read and watch. NewGame, ApplyMove and Undo carry a random request id (`newRequestId()`)
 * unless the caller gives one. The raw generated client is `client.raw` (every RPC, every field).
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  createClient,
  createContextKey,
  createContextValues,
  type CallOptions,
  type Client,
  type Interceptor,
  type Transport,
} from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type * as http2 from "node:http2";
import {
  AccordionService,
  MoveKind,
  MoveSchema,
  NewGameRequestSchema,
  type ApplyMoveResponse,
  type Game,
  type GameEvent,
  type HintResponse,
  type LegalMovesResponse,
  type NewGameResponse,
  type ScoreResponse,
  type ShareGameResponse,
  type UndoResponse,
  type Variant,
} from "./gen/accordion/v1/accordion_pb.js";
import { AccordionError } from "./errors.js";
import { traceContextInterceptor, type TraceparentSource } from "./tracecontext.js";

/** The token to send with one call ("" sends none). */
const TOKEN = createContextKey<string>("", { description: "accordion game token" });

/** Sets `authorization: Bearer <token>` from the call's context value, unless the call set it. */
export function bearerTokenInterceptor(): Interceptor {
  return (next) => async (req) => {
    const token = req.contextValues.get(TOKEN);
    if (token && !req.header.has("authorization")) {
      req.header.set("authorization", `Bearer ${token}`);
    }
    return next(req);
  };
}

export interface AccordionClientOptions {
  /** TLS for a `host:port` target (an `https://` URL asks for it by itself; `http://` refuses it). */
  tls?: boolean;
  /** Per-call timeout in milliseconds (default 10 000; 0 for none). */
  timeoutMs?: number;
  /** Options for Node's `http2.connect()`, e.g. `{ ca }` for a server with a private CA. */
  nodeOptions?: http2.SecureClientSessionOptions;
  /**
   * The W3C `traceparent` every call carries (tracecontext.ts): a header, or a function asked
   * per call (e.g. the current OpenTelemetry span's); default: a new trace per call. `false`: none.
   */
  traceparent?: TraceparentSource | false;
}

/** Options of the calls that change a game. */
export interface MutationOptions {
  /** Apply only at this version; otherwise the call fails with VERSION_MISMATCH (ABORTED). */
  expectedVersion?: bigint;
  /**
   * Idempotency key: a retry with the same key and request returns the first answer.
   * Default: a fresh `newRequestId()` (128 random bits) per call.
   */
  requestId?: string;
}

export type NewGameInit = MessageInitShape<typeof NewGameRequestSchema>;
export type MoveInit = MessageInitShape<typeof MoveSchema>;

export class AccordionClient {
  /** The generated client: every RPC with the generated request and response types. */
  readonly raw: Client<typeof AccordionService>;
  private readonly tokens = new Map<string, string>();

  /** Use `createAccordionClient`; this constructor is for a transport of your own (add `bearerTokenInterceptor()` to it). */
  constructor(
    transport: Transport,
    private readonly timeoutMs: number,
    private readonly sessions?: Http2SessionManager,
  ) {
    this.raw = createClient(AccordionService, transport);
  }

  /** Remembers a game's token (sent with every later call on that game). */
  setToken(gameId: string, token: string): void {
    this.tokens.set(gameId, token);
  }

  /** The token this client holds for a game, if any. */
  tokenFor(gameId: string): string | undefined {
    return this.tokens.get(gameId);
  }

  /** Closes the HTTP/2 connection (the client's own transport only). */
  close(): void {
    this.sessions?.abort();
  }

  private options(gameId?: string, extra: CallOptions = {}): CallOptions {
    return this.tokenOptions(gameId === undefined ? undefined : this.tokens.get(gameId), extra);
  }

  /** Call options that send `token` (a play token, or a spectator's watch token). */
  tokenOptions(token: string | undefined, extra: CallOptions = {}): CallOptions {
    const contextValues = createContextValues();
    if (token) contextValues.set(TOKEN, token);
    return { timeoutMs: this.timeoutMs || undefined, contextValues, ...extra };
  }

  /** @internal */
  async call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw AccordionError.from(err);
    }
  }

  /** The registered variants (all, or the one `variant` names). */
  async listVariants(variant = ""): Promise<Variant[]> {
    return this.call(async () => (await this.raw.listVariants({ variant }, this.options())).variants);
  }

  /**
   * Deals a game (seed, deal or neither) and keeps its token for the later calls. Without a
   * `requestId` the request gets a fresh `newRequestId()`.
   */
  async newGame(request: NewGameInit): Promise<NewGameResponse> {
    const message = create(NewGameRequestSchema, request);
    if (!message.requestId) message.requestId = newRequestId();
    const reply = await this.call(() => this.raw.newGame(message, this.options()));
    if (reply.game) this.tokens.set(reply.game.id, reply.token);
    return reply;
  }

  /**
   * Deals a new game from a deal code (`NewGameResponse.dealCode`, `shareGame`): the same variant,
   * rule options and cards as the game it came from, hidden cards still hidden. `options` may not
   * show what the original hides (`open`, a looser `undo`): DEAL_CODE_OPTIONS; an unknown code:
   * DEAL_CODE_NOT_FOUND. Keeps the new game's token, as `newGame`.
   */
  async newGameFromCode(code: string, options: Record<string, string> = {}): Promise<NewGameResponse> {
    // Codes are upper-case Crockford base32; a pasted code may have come through lower-cased.
    return this.newGame({ options, start: { case: "dealCode", value: code.trim().toUpperCase() } });
  }

  /**
   * The game's deal code and watch token (ShareGame; needs the play token). With `rotate` a new
   * watch token is issued and the old one stops working.
   */
  async shareGame(gameId: string, options: { rotate?: boolean } = {}): Promise<ShareGameResponse> {
    return this.call(() =>
      this.raw.shareGame({ gameId, rotateWatchToken: options.rotate ?? false }, this.options(gameId)),
    );
  }

  /**
   * A read-only handle on a game from its watch token: it reads (getGame, legalMoves, score,
   * picture) and watches, and has no way to play; the server refuses a move made with a watch
   * token anyway (PERMISSION_DENIED, WATCH_ONLY). The client's own token for the game, if any,
   * is not used.
   */
  watcher(gameId: string, watchToken: string): GameWatcher {
    return new GameWatcher(this, gameId, watchToken);
  }

  async getGame(gameId: string): Promise<Game> {
    const reply = await this.call(() => this.raw.getGame({ gameId }, this.options(gameId)));
    return reply.game!;
  }

  async legalMoves(gameId: string): Promise<LegalMovesResponse> {
    return this.call(() => this.raw.legalMoves({ gameId }, this.options(gameId)));
  }

  /** Plays a move given as notation: "10D>4D", "deal", "x7-8", "redeal", "claim 3-5 run 5>3". */
  async play(gameId: string, notation: string, options: MutationOptions = {}): Promise<ApplyMoveResponse> {
    return this.move(gameId, { notation }, options);
  }

  /** Plays a structured move (e.g. one of `game.legalMoves`, or `tableauMove(...)` of zones.ts). */
  async move(gameId: string, move: MoveInit, options: MutationOptions = {}): Promise<ApplyMoveResponse> {
    return this.call(() =>
      this.raw.applyMove(
        {
          gameId,
          move: create(MoveSchema, move),
          expectedVersion: options.expectedVersion,
          requestId: options.requestId || newRequestId(),
        },
        this.options(gameId),
      ),
    );
  }

  /** DRAW (tableau games with a stock and a waste): turns cards from the stock onto the waste. */
  async draw(gameId: string, options: MutationOptions = {}): Promise<ApplyMoveResponse> {
    return this.move(gameId, { kind: MoveKind.DRAW }, options);
  }

  /** Takes back the last move. */
  async undo(gameId: string, options: MutationOptions = {}): Promise<UndoResponse> {
    return this.call(() =>
      this.raw.undo(
        { gameId, expectedVersion: options.expectedVersion, requestId: options.requestId || newRequestId() },
        this.options(gameId),
      ),
    );
  }

  /**
   * Gives the game up: it ends LOST and its penalty stands (`undo` takes it back). Allowed while
   * the game is in progress; once it is over the server refuses it (FAILED_PRECONDITION, ILLEGAL_MOVE).
   */
  async resign(gameId: string, options: MutationOptions = {}): Promise<ApplyMoveResponse> {
    return this.move(gameId, { kind: MoveKind.RESIGN }, options);
  }

  /** A suggested move (`move` is absent when the game is over). */
  async hint(gameId: string): Promise<HintResponse> {
    return this.call(() => this.raw.hint({ gameId }, this.options(gameId)));
  }

  async score(gameId: string): Promise<ScoreResponse> {
    return this.call(() => this.raw.score({ gameId }, this.options(gameId)));
  }

  /**
   * The game's events as they happen (`afterVersion` 0: first every event still in the log).
   * Stop by breaking out of the loop or aborting `signal`.
   */
  async *watch(gameId: string, afterVersion = 0n, signal?: AbortSignal): AsyncGenerator<GameEvent> {
    try {
      // No timeout: a watch lasts as long as the caller wants it.
      const stream = this.raw.watchGame({ gameId, afterVersion }, this.options(gameId, { timeoutMs: undefined, signal }));
      for await (const reply of stream) {
        if (reply.event) yield reply.event;
      }
    } catch (err) {
      throw AccordionError.from(err);
    }
  }
}

/** A spectator's handle (`AccordionClient.watcher`): the reading RPCs and WatchGame with a watch token. */
export class GameWatcher {
  constructor(
    private readonly client: AccordionClient,
    readonly gameId: string,
    private readonly watchToken: string,
  ) {}

  async getGame(): Promise<Game> {
    const reply = await this.client.call(() =>
      this.client.raw.getGame({ gameId: this.gameId }, this.client.tokenOptions(this.watchToken)),
    );
    return reply.game!;
  }

  async legalMoves(): Promise<LegalMovesResponse> {
    return this.client.call(() =>
      this.client.raw.legalMoves({ gameId: this.gameId }, this.client.tokenOptions(this.watchToken)),
    );
  }

  async score(): Promise<ScoreResponse> {
    return this.client.call(() =>
      this.client.raw.score({ gameId: this.gameId }, this.client.tokenOptions(this.watchToken)),
    );
  }

  /** The layout as an SVG image (GetGamePicture), as the player sees it. */
  async picture(): Promise<Uint8Array> {
    const body = await this.client.call(() =>
      this.client.raw.getGamePicture({ gameId: this.gameId }, this.client.tokenOptions(this.watchToken)),
    );
    return body.data;
  }

  /** As `AccordionClient.watch`. */
  async *watch(afterVersion = 0n, signal?: AbortSignal): AsyncGenerator<GameEvent> {
    try {
      const options = this.client.tokenOptions(this.watchToken, { timeoutMs: undefined, signal });
      for await (const reply of this.client.raw.watchGame({ gameId: this.gameId, afterVersion }, options)) {
        if (reply.event) yield reply.event;
      }
    } catch (err) {
      throw AccordionError.from(err);
    }
  }
}

/**
 * A fresh idempotency key for NewGame, ApplyMove and Undo: 128 random bits as 32 hex digits.
 * The server answers a repeated id with the first reply, so an id must be unguessable and
 * used for one request only; the client makes one per call unless the caller gives its own.
 */
export function newRequestId(): string {
  // Web Crypto: the same global in Node 20+ and in browsers, so the browser bundle needs no shim.
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)$/;
const EXAMPLES = "host:port (127.0.0.1:50051), http://host:port, https://host[:port] or dns:///host:port";

function invalid(target: string, why: string): TypeError {
  return new TypeError(`not a valid target ${JSON.stringify(target)}: ${why}; give ${EXAMPLES}`);
}

function hostPort(target: string, hostAndPort: string): string {
  const colon = hostAndPort.lastIndexOf(":");
  if (colon <= 0) throw invalid(target, "the port is missing");
  const host = hostAndPort.slice(0, colon);
  const port = hostAndPort.slice(colon + 1);
  if (!HOST.test(host)) throw invalid(target, `${JSON.stringify(host)} is not a host name (an IPv6 address goes in brackets)`);
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw invalid(target, "the port must be a number in 1..65535");
  }
  return `${host}:${port}`;
}

/**
 * The base URL the transport wants, from what a user writes: `host:port` (plaintext, or TLS with
 * `tls`), `http://host:port`, `https://host[:port]`, or gRPC's `dns:///host:port`. Anything else
 * throws a TypeError that says what a target looks like.
 */
export function toBaseUrl(target: string, tls = false): string {
  if (typeof target !== "string") throw new TypeError(`a target is text such as "127.0.0.1:50051", not ${String(target)}`);
  const text = target.trim();
  if (!text) throw invalid(target, "the target is empty");
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(text)?.[1]?.toLowerCase();
  if (scheme === "http" || scheme === "https") {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw invalid(target, "it does not read as a URL");
    }
    if ((url.pathname !== "/" && url.pathname !== "") || url.search || url.hash || url.username || url.password) {
      throw invalid(target, "a target has no path, query or user");
    }
    if (!url.hostname) throw invalid(target, "the host is missing");
    if (scheme === "http" && tls) throw invalid(target, "http:// is plaintext but tls was asked for; use https://");
    return url.origin;
  }
  if (/^dns:/i.test(text)) {
    // dns:host:port, or dns://authority/host:port (the authority, usually empty, is ignored)
    const rest = text.slice(4).replace(/^\/\/[^/]*\//, "");
    return `${tls ? "https" : "http"}://${hostPort(target, rest)}`;
  }
  if (scheme !== undefined) throw invalid(target, "use http:// or https://");
  return `${tls ? "https" : "http"}://${hostPort(target, text)}`;
}

/**
 * A client for the server at `target`: `"127.0.0.1:50051"` or `"http://host:port"` for
 * plaintext HTTP/2, as `make serve` listens; `"https://host"` (or `{ tls: true }`) for TLS.
 */
export function createAccordionClient(target: string, options: AccordionClientOptions = {}): AccordionClient {
  const baseUrl = toBaseUrl(target, options.tls);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const sessions = new Http2SessionManager(baseUrl, undefined, options.nodeOptions);
  const transport = createGrpcTransport({
    baseUrl,
    sessionManager: sessions,
    interceptors: [
      bearerTokenInterceptor(),
      ...(options.traceparent === false ? [] : [traceContextInterceptor(options.traceparent)]),
    ],
  });
  return new AccordionClient(transport, timeoutMs, sessions);
}

/**
 * A client over a transport of your own: gRPC-Web in a browser (`createBrowserClient` in
 * browser.ts builds one), Connect, or a test double. Give the transport
 * `bearerTokenInterceptor()` so the game tokens are sent; `close()` is then a no-op (the
 * transport's owner closes it).
 */
export function createAccordionClientFromTransport(
  transport: Transport,
  options: Pick<AccordionClientOptions, "timeoutMs"> = {},
): AccordionClient {
  return new AccordionClient(transport, options.timeoutMs ?? 10_000);
}
