/**
 * The client in a browser: gRPC-Web (`@connectrpc/connect-web`) to an Envoy with the
 * `envoy.filters.http.grpc_web` filter in front of the server (deploy/envoy/envoy.yaml; `make
 * serve-web` serves it and a page on one origin). Every RPC and the server's streaming WatchGame
 * work as from Node; the game token goes out as `authorization: Bearer <token>`.
 *
 * ```ts
 * import { createBrowserClient } from "@accordion/client/browser";
 * const client = createBrowserClient(location.origin);
 * const { game, token } = await client.newGame({ variant: "accordion", seed: 7n });
 * ```
 *
 * This entry imports nothing from Node: bundle it with Vite, esbuild, webpack ... .
 */
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import {
  bearerTokenInterceptor,
  createAccordionClientFromTransport,
  type AccordionClient,
  type AccordionClientOptions,
} from "./client.js";

/** A client for the service behind the gRPC-Web endpoint at `baseUrl` (e.g. `location.origin`). */
export function createBrowserClient(
  baseUrl: string,
  options: Pick<AccordionClientOptions, "timeoutMs"> = {},
): AccordionClient {
  const transport = createGrpcWebTransport({
    baseUrl,
    // Binary protobuf in the gRPC-Web frames: smaller than JSON, and what Envoy's filter expects.
    useBinaryFormat: true,
    interceptors: [bearerTokenInterceptor()],
  });
  return createAccordionClientFromTransport(transport, options);
}

export { AccordionClient, GameWatcher, bearerTokenInterceptor, createAccordionClientFromTransport } from "./client.js";
export type { AccordionClientOptions, MoveInit, MutationOptions, NewGameInit } from "./client.js";
export { TRACEPARENT, newTraceparent, parseTraceparent, traceContextInterceptor } from "./tracecontext.js";
export type { TraceparentSource } from "./tracecontext.js";
export { AccordionError, ERROR_DOMAIN, codeName } from "./errors.js";
export { BACK, EMPTY, drawMove, isTableau, layoutLines, pairMove, pileCards, pileText, shownText, tableauMove, zoneOf } from "./zones.js";
export type { ShownCard } from "./zones.js";
export type { ErrorReason, FieldViolation } from "./errors.js";
export { Code, ConnectError } from "@connectrpc/connect";
export * from "./gen/accordion/v1/accordion_pb.js";
export { HttpBodySchema, type HttpBody } from "./gen/google/api/httpbody_pb.js";
