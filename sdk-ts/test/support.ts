// What every test file shares: its own sandbox for the file's lifetime, a
// fresh key per test, and the journal read through the typed client.
import assert from "node:assert/strict";
import { after, before } from "node:test";
import type { components } from "../build/api.d.ts";
import { freshKey, startSandbox, type Server } from "../harness/sandbox.ts";
import { sdkClient, type RetryOptions, type SdkClient } from "../src/client.ts";

// Node 20 runs a file's top-level before() hooks as they are declared,
// without waiting for the one before, so each start waits for the previous
// server's: a proxy can then be started in front of the sandbox.
let previousStart: Promise<unknown> = Promise.resolve();

/**
 * Starts a server before the file's tests, after the servers declared
 * before it, and stops it after them; the function returned gives its base URL.
 */
export function useServer(start: () => Promise<Server>): () => string {
  let server: Server | undefined;
  before(async () => {
    const starting = previousStart.then(start);
    previousStart = starting;
    server = await starting;
  });
  after(async () => {
    await server?.stop();
  });
  return () => {
    assert.ok(server, "the server has not started");
    return server.baseUrl;
  };
}

/** Starts a sandbox with `flags` before the file's tests and stops it after them. */
export function useSandbox(flags: string[] = []): () => string {
  return useServer(() => startSandbox(flags));
}

/** A new account: its key, a client with the given retry options, and one that never retries. */
export function newAccount(baseUrl: string, retry: RetryOptions = {}): { key: string; api: SdkClient; once: SdkClient } {
  const key = freshKey();
  return { key, api: sdkClient(baseUrl, key, retry), once: sdkClient(baseUrl, key, { attempts: 1 }) };
}

/** A valid campaign to create. */
export const checkout = { name: "Checkout", platform: "ios", testersRequired: 10, rewardPerBug: 19.99 } as const;

/** The journal's entries for `method` and `path`, newest first. */
export async function journal(client: SdkClient, method: "GET" | "POST" | "PATCH", path: string) {
  const { data, error } = await client.GET("/_sandbox/requests", { params: { query: { method, path } } });
  assert.equal(error, undefined);
  const answer = data!.data;
  // The journal answers a count only when asked with count=true.
  if (!("items" in answer)) throw new Error(`the journal answered a count, not a page: ${JSON.stringify(answer)}`);
  return answer.items;
}

/** Plans a fault on the account and returns its id. */
export async function planFault(client: SdkClient, fault: components["schemas"]["FaultPlanCreate"]): Promise<string> {
  const { data, error } = await client.POST("/_sandbox/faults", { body: fault });
  assert.equal(error, undefined, JSON.stringify(error));
  return data!.data.id;
}

/**
 * Resolves with the first truthy result of `check`, asked again after each
 * answer, for what the sandbox records just after the client has moved on.
 */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await check();
    if (found) return found;
    assert.ok(Date.now() < deadline, `not seen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
