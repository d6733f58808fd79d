// Fault constructors: the faults docs/controls.md describes, as Go's
// sandboxtest offers them, ready for `planFault`; spread more fields into
// one to refine it, or pass it through `on` and `retryAfter`.
import type { components } from "../build/api.d.ts";

type Schemas = components["schemas"];

/** A fault as POST /_sandbox/faults takes it. */
export type Fault = Schemas["FaultPlanCreate"];

/** Answers `status` (400–599) in the API's place, in the error envelope. */
export function statusFault(status: number): Fault {
  return { status };
}

/**
 * Answers `status` with `body` and `headers` in the API's place: a success
 * the API could send but does not (an unknown enum value, extra fields, an
 * empty list), a redirect (with `Location` in `headers`) or a 304, for a
 * client's decoder to meet. An empty body is sent as none, which 204, 205
 * and 304 must have. With `phase: "after"` the API carries the request out
 * first.
 */
export function stub(status: number, body = "", headers?: Record<string, string>): Fault {
  return { status, ...(body === "" ? {} : { body }), ...(headers === undefined ? {} : { headers }) };
}

/** Fails the network as `kind` says: reset, close, truncate, malformed or trickle. */
export function networkFault(kind: Schemas["NetworkFault"]): Fault {
  return { network: kind };
}

/** Holds the request back for `ms` before the API carries it out. */
export function delayFault(ms: number): Fault {
  return { delayMs: ms };
}

/**
 * Lets the API carry the request out and then drops the connection without
 * an answer: the write whose answer never came.
 */
export function lostAnswer(): Fault {
  return { network: "reset", phase: "after" };
}

/**
 * Makes a status fault's answer carry Retry-After: seconds (0 to 3600), in
 * place of the 1 second a 429 or 503 says without it.
 */
export function retryAfter(fault: Fault, seconds: number): Fault {
  return { ...fault, retryAfter: seconds };
}

/** Limits a fault to one method and path (a trailing * matches every path it starts). */
export function on(fault: Fault, method: Schemas["FaultMethod"], path: string): Fault {
  return { ...fault, method, path };
}
