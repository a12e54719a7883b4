/** @accordion/client: a TypeScript client for accordion.v1.AccordionService. */
export { AccordionClient, GameWatcher, bearerTokenInterceptor, createAccordionClient, newRequestId, toBaseUrl } from "./client.js";
export type { AccordionClientOptions, MoveInit, MutationOptions, NewGameInit } from "./client.js";
export { TRACEPARENT, newTraceparent, parseTraceparent, traceContextInterceptor } from "./tracecontext.js";
export type { TraceparentSource } from "./tracecontext.js";
export { AccordionError, ERROR_DOMAIN, codeName } from "./errors.js";
export { BACK, EMPTY, drawMove, isTableau, layoutLines, pairMove, pileCards, pileText, shownText, tableauMove, zoneOf } from "./zones.js";
export type { ShownCard } from "./zones.js";
export type { ErrorReason, FieldViolation } from "./errors.js";
export { Code, ConnectError } from "@connectrpc/connect";
// The generated messages, enums and the service descriptor.
export * from "./gen/accordion/v1/accordion_pb.js";
