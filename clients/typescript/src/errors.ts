/**
 * The service's errors as one typed class.
 *
 * Every failure the server reports is a `google.rpc.Status` with an `ErrorInfo` (domain
 * `accordion.v1`, a `reason` such as `ILLEGAL_MOVE`); request problems add a `BadRequest`, and
 * an illegal or unreadable move adds the legal moves (a packed `LegalMovesResponse`).
 * `AccordionError.from()` reads those details out of a `ConnectError`.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { LegalMovesResponseSchema, type Move } from "./gen/accordion/v1/accordion_pb.js";
import { BadRequestSchema, ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";

/** The `ErrorInfo` domain of every error the service reports. */
export const ERROR_DOMAIN = "accordion.v1";

/** The reasons the service puts in `ErrorInfo.reason` (see the error table in docs/api.md). */
export type ErrorReason =
  | "INVALID_REQUEST"
  | "MALFORMED_REQUEST"
  | "UNKNOWN_VARIANT"
  | "INVALID_OPTION"
  | "INVALID_CARD"
  | "INVALID_DEAL"
  | "INVALID_MOVE"
  | "ILLEGAL_MOVE"
  | "NOTHING_TO_UNDO"
  | "NOTHING_TO_REDO"
  | "UNDO_NOT_ALLOWED"
  | "HIDDEN_INFORMATION"
  | "SOLVER_UNSUPPORTED"
  | "WINNABLE_NOT_FOUND"
  | "GAME_NOT_FOUND"
  | "GAME_EXISTS"
  | "VERSION_MISMATCH"
  | "REQUEST_ID_REUSED"
  | "MISSING_TOKEN"
  | "BAD_TOKEN"
  | "WATCH_ONLY"
  | "DEAL_CODE_NOT_FOUND"
  | "DEAL_CODE_OPTIONS"
  | "API_KEY_MISSING"
  | "API_KEY_INVALID"
  | "RATE_LIMITED"
  | "CAPACITY_EXCEEDED"
  | "STORE_FULL"
  | "STORE_UNAVAILABLE"
  | "DEADLINE_EXCEEDED"
  | "GAME_CORRUPT"
  | "INTERNAL";

/** One `BadRequest` field violation. */
export interface FieldViolation {
  field: string;
  description: string;
}

/** A failed call, with the status code and the details the server sent. */
export class AccordionError extends Error {
  override readonly name = "AccordionError";

  private constructor(
    /** The gRPC status code (`Code.FailedPrecondition`, ...). */
    readonly code: Code,
    /** The code's name as gRPC spells it: `FAILED_PRECONDITION`, ... */
    readonly codeName: string,
    /** `ErrorInfo.reason`, or "" when the error did not come from the service (e.g. no connection). */
    readonly reason: ErrorReason | "",
    /** The server's message, without Connect's "[code]" prefix. */
    readonly rawMessage: string,
    /** `ErrorInfo.metadata`: e.g. `current_version` for VERSION_MISMATCH. */
    readonly metadata: Readonly<Record<string, string>>,
    /** `BadRequest` field violations, for INVALID_REQUEST and REQUEST_ID_REUSED. */
    readonly fieldViolations: readonly FieldViolation[],
    /** The moves legal now, for ILLEGAL_MOVE and INVALID_MOVE (structured and notation). */
    readonly legalMoves: readonly Move[] | undefined,
    /** The underlying ConnectError. */
    override readonly cause: ConnectError,
  ) {
    super(`${codeName}${reason ? ` (${reason})` : ""}: ${rawMessage}`);
  }

  /** The game's version now, for VERSION_MISMATCH. */
  get currentVersion(): bigint | undefined {
    const v = this.metadata["current_version"];
    return v === undefined ? undefined : BigInt(v);
  }

  /** Wraps anything thrown by a call; errors that are already AccordionErrors pass through. */
  static from(err: unknown): AccordionError {
    if (err instanceof AccordionError) return err;
    const ce = ConnectError.from(err);
    const info = ce.findDetails(ErrorInfoSchema).find((i) => i.domain === ERROR_DOMAIN);
    const violations = ce
      .findDetails(BadRequestSchema)
      .flatMap((b) => b.fieldViolations.map((v) => ({ field: v.field, description: v.description })));
    const legal = ce.findDetails(LegalMovesResponseSchema)[0];
    return new AccordionError(
      ce.code,
      codeName(ce.code),
      (info?.reason ?? "") as ErrorReason | "",
      ce.rawMessage,
      { ...(info?.metadata ?? {}) },
      violations,
      legal?.moves,
      ce,
    );
  }
}

/** `Code.FailedPrecondition` -> "FAILED_PRECONDITION" (the name gRPC and docs/api.md use). */
export function codeName(code: Code): string {
  const name = Code[code] ?? `CODE_${code}`;
  return name.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}
