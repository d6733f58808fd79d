// What every test file shares: its own sandbox for the file's lifetime, a
// fresh key per test, and the journal read through the typed client.
import assert from "node:assert/strict";
import { after, before } from "node:test";
import type { components } from "../build/api.d.ts";
import { freshKey, startSandbox, type Sandbox } from "../harness/sandbox.ts";
import { sdkClient, type RetryOptions, type SdkClient } from "../src/client.ts";

/** Starts a sandbox with `flags` before the file's tests and stops it after them. */
export function useSandbox(flags: string[] = []): () => string {
  let sandbox: Sandbox | undefined;
  before(async () => {
    sandbox = await startSandbox(flags);
  });
  after(async () => {
    await sandbox?.stop();
  });
  return () => {
    assert.ok(sandbox, "the sandbox has not started");
    return sandbox.baseUrl;
  };
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
  return data!.data.items;
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
