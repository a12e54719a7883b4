/**
 * W3C trace context (https://www.w3.org/TR/trace-context/): every call from `createAccordionClient`
 * carries a `traceparent` header, so the server's span of the call (and its access line) joins
 * the caller's trace. The header is, first found: the call's own `traceparent` header, the call's
 * `TRACEPARENT` context value, the client's `traceparent` option (a string, or a function asked
 * per call: e.g. the current OpenTelemetry span's), else a new trace's (sampled).
 *
 * ```ts
 * const client = createAccordionClient("127.0.0.1:50051", { traceparent: () => current() });
 * ```
 */
import { createContextKey, type Interceptor } from "@connectrpc/connect";

export const TRACEPARENT_HEADER = "traceparent";

/** A call's traceparent (`contextValues.set(TRACEPARENT, "00-…")`); "" for the client's own. */
export const TRACEPARENT = createContextKey<string>("", { description: "W3C traceparent of one call" });

/** Where the client's traceparent comes from: a fixed header, or a function asked per call. */
export type TraceparentSource = string | (() => string | undefined);

const FORMAT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

function hex(bytes: number): string {
  // Web Crypto: the same global in Node 20+ and in browsers.
  const random = globalThis.crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A traceparent of a new trace: version 00, 128 random bits of trace id, 64 of parent id, sampled. */
export function newTraceparent(): string {
  return `00-${hex(16)}-${hex(8)}-01`;
}

/** The trace id, parent id and flags of a valid version-00 traceparent, else undefined. */
export function parseTraceparent(text: string): { traceId: string; parentId: string; flags: number } | undefined {
  const found = FORMAT.exec(text.trim());
  if (!found || /^0+$/.test(found[1]!) || /^0+$/.test(found[2]!)) return undefined;
  return { traceId: found[1]!, parentId: found[2]!, flags: parseInt(found[3]!, 16) };
}

/** Sets `traceparent` on every call that has none (see the module's comment for the order). */
export function traceContextInterceptor(source?: TraceparentSource): Interceptor {
  if (typeof source === "string" && parseTraceparent(source) === undefined) {
    throw new TypeError(`not a W3C traceparent: ${JSON.stringify(source)}`);
  }
  return (next) => async (req) => {
    if (!req.header.has(TRACEPARENT_HEADER)) {
      const given = req.contextValues.get(TRACEPARENT) || (typeof source === "function" ? source() : source);
      req.header.set(TRACEPARENT_HEADER, given && parseTraceparent(given) ? given : newTraceparent());
    }
    return next(req);
  };
}
