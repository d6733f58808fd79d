// A small SDK as a TypeScript team would write it: openapi-fetch over the
// types generated from the sandbox's document, behind a fetch that times
// out, retries only what is safe to send again, honours Retry-After and
// turns a body that is not JSON into an error of its own.
//
// What is retried: a request whose method is idempotent (GET, HEAD, OPTIONS,
// PUT, DELETE) after a 429, a 500, 502, 503 or 504, a lost or cut answer or
// a timeout, since sending it again does what sending it once did. Any other
// request (POST, PATCH) only when the failure proves it was not applied: a
// 429, which refuses a request before it is carried out, or a connection
// refused, which sent nothing. After a 5xx, a reset or closed connection, a
// truncated body or a timeout, a POST may have created its record already,
// so its failure goes to the caller, who knows whether a second one is safe.
import createClient from "openapi-fetch";
import type { paths } from "../build/api.d.ts";

/** The User-Agent every request of this client carries. */
export const userAgent = "test-campaign-sdk-ts/1.0.0 (sandbox tests)";

/** An answer whose body was cut short or never came: retried only when the request is idempotent. */
export class NetworkError extends Error {
  override name = "NetworkError";
}

/** No answer within the client's timeout. */
export class TimeoutError extends Error {
  override name = "TimeoutError";
}

/** An answer declared JSON whose body is not: not retried, the server did answer. */
export class MalformedResponseError extends Error {
  override name = "MalformedResponseError";
  constructor(
    readonly status: number,
    readonly body: string,
    readonly fault: string | null,
    options: { cause: unknown },
  ) {
    super(`status ${status}: the body is not JSON`, options);
  }
}

/** What the retrying fetch does; the defaults are an SDK's. */
export interface RetryOptions {
  /** Tries in all, the first included. */
  attempts?: number;
  /** Each try's budget, through an AbortSignal. */
  timeoutMs?: number;
  /** How the client waits between tries; a test passes its own. */
  sleep?: (ms: number) => Promise<void>;
  /** Called before each retry with the wait chosen and why. */
  onRetry?: (retry: { attempt: number; waitMs: number; reason: string }) => void;
}

const retriedStatuses = new Set([429, 500, 502, 503, 504]);

/** The methods RFC 9110 calls idempotent: sending one twice does what sending it once does. */
const idempotentMethods = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);

/** Whether a status proves the request was refused before it was carried out. */
function refusedUnapplied(status: number): boolean {
  return status === 429;
}

/** Whether fetch failed because the connection was refused, before any byte of the request went out. */
function connectionRefused(err: unknown): boolean {
  const cause = err instanceof Error ? (err.cause as { code?: unknown; errors?: unknown[] } | undefined) : undefined;
  if (cause?.code === "ECONNREFUSED") return true;
  // Node tries each address of a name in turn and reports them together.
  return Array.isArray(cause?.errors) && cause.errors.length > 0 && cause.errors.every((e) => (e as { code?: unknown }).code === "ECONNREFUSED");
}

function sleepFor(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function backoffMs(attempt: number): number {
  return 100 * 2 ** (attempt - 1);
}

/**
 * The wait a Retry-After asks for: seconds, or an HTTP-date, counted from
 * the answer's Date so that the server's clock is the one that runs out; the
 * back-off when there is neither.
 */
function waitMs(res: Response, attempt: number): number {
  const retryAfter = res.headers.get("Retry-After");
  if (retryAfter === null) return backoffMs(attempt);
  const seconds = Number(retryAfter);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(retryAfter);
  const now = Date.parse(res.headers.get("Date") ?? "");
  if (Number.isNaN(at)) return backoffMs(attempt);
  return Math.max(0, at - (Number.isNaN(now) ? Date.now() : now));
}

/**
 * A fetch that reads each answer whole before handing it on, so that a body
 * cut short is retried like a reset connection, and a JSON body that does
 * not parse is a MalformedResponseError rather than a SyntaxError deep in
 * the caller.
 */
export function retryingFetch(options: RetryOptions = {}): (request: Request) => Promise<Response> {
  const { attempts = 4, timeoutMs = 5000, sleep = sleepFor, onRetry } = options;
  return async (request) => {
    const idempotent = idempotentMethods.has(request.method);
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= attempts;
      let res: Response;
      let body: ArrayBuffer;
      try {
        res = await fetch(request.clone(), { signal: AbortSignal.timeout(timeoutMs) });
        body = await res.arrayBuffer();
      } catch (err) {
        const failure =
          err instanceof DOMException && err.name === "TimeoutError"
            ? new TimeoutError(`no answer within ${timeoutMs} ms`, { cause: err })
            : new NetworkError(`${request.method} ${new URL(request.url).pathname}: ${String(err)}`, { cause: err });
        if (last || !(idempotent || connectionRefused(err))) throw failure;
        const wait = backoffMs(attempt);
        onRetry?.({ attempt, waitMs: wait, reason: failure.name });
        await sleep(wait);
        continue;
      }
      if (retriedStatuses.has(res.status) && (idempotent || refusedUnapplied(res.status)) && !last) {
        const wait = waitMs(res, attempt);
        onRetry?.({ attempt, waitMs: wait, reason: `status ${res.status}` });
        await sleep(wait);
        continue;
      }
      const text = new TextDecoder().decode(body);
      if (res.headers.get("Content-Type")?.startsWith("application/json") && request.method !== "HEAD") {
        try {
          JSON.parse(text);
        } catch (err) {
          throw new MalformedResponseError(res.status, text, res.headers.get("X-Sandbox-Fault"), { cause: err });
        }
      }
      return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    }
  };
}

/** A typed client for one key, through `retryingFetch(retry)`. */
export function sdkClient(baseUrl: string, key: string, retry: RetryOptions = {}) {
  return createClient<paths>({
    baseUrl,
    fetch: retryingFetch(retry),
    headers: { Authorization: `Bearer ${key}`, "User-Agent": userAgent },
  });
}

/** The client `sdkClient` returns. */
export type SdkClient = ReturnType<typeof sdkClient>;
