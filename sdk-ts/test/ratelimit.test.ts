// A 429 waited out through Retry-After, on the sandbox's frozen clock: the
// client's wait moves the account's clock instead of passing real time.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sdkClient } from "../src/client.ts";
import { journal, newAccount, planFault, useSandbox } from "./support.ts";

const baseUrl = useSandbox(["-frozen-clock", "2026-01-01T00:00:30Z", "-rate-limit-minute", "3"]);

test("a 429 is retried after its Retry-After, which the frozen clock makes pass at once", async () => {
  const { key, once } = newAccount(baseUrl());
  const waits: number[] = [];
  const api = sdkClient(baseUrl(), key, {
    sleep: async (ms) => {
      waits.push(ms);
      const moved = await once.POST("/_sandbox/clock", { body: { advance: `${ms}ms` } });
      assert.equal(moved.error, undefined);
    },
  });

  for (const remaining of [2, 1, 0]) {
    const { response } = await api.GET("/v1/testers");
    assert.equal(response.headers.get("X-RateLimit-Remaining"), String(remaining));
  }
  const refused = await once.GET("/v1/testers");
  assert.equal(refused.response.status, 429);
  assert.equal(refused.error?.error.code, "RATE_LIMIT_EXCEEDED");
  assert.equal(refused.response.headers.get("Retry-After"), "30", "the minute window ends 30 s after 00:00:30");
  const stillRefused = await once.GET("/v1/testers");
  assert.equal(stillRefused.response.headers.get("Retry-After"), "30", "a frozen window never runs out by itself");

  const retried = await api.GET("/v1/testers");
  assert.equal(retried.response.status, 200);
  assert.deepEqual(waits, [30000]);
  assert.equal(retried.response.headers.get("X-RateLimit-Remaining"), "2", "a new minute, with its own budget");
  assert.equal(retried.response.headers.get("X-RateLimit-Reset"), String(Date.parse("2026-01-01T00:02:00Z") / 1000));

  const sent = await journal(once, "GET", "/v1/testers");
  assert.deepEqual(sent.map((r) => r.status), [200, 429, 429, 429, 200, 200, 200]);
  assert.equal(sent[0]?.at, "2026-01-01T00:01:00.000Z");
});

test("an injected 503 whose Retry-After is an HTTP-date is retried that long after the answer's Date", async () => {
  const { key, once } = newAccount(baseUrl());
  const waits: number[] = [];
  const api = sdkClient(baseUrl(), key, {
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  const retryAfter = "Thu, 01 Jan 2026 00:00:45 GMT";
  const faultId = await planFault(once, { method: "GET", path: "/v1/testers", status: 503, retryAfter });
  const refused = await once.GET("/v1/testers");
  assert.equal(refused.response.headers.get("X-Sandbox-Fault"), faultId);
  assert.equal(refused.response.headers.get("Retry-After"), retryAfter);
  assert.equal(refused.response.headers.get("Date"), "Thu, 01 Jan 2026 00:00:30 GMT");

  await planFault(once, { method: "GET", path: "/v1/testers", status: 503, retryAfter });
  const retried = await api.GET("/v1/testers");
  assert.equal(retried.response.status, 200);
  assert.deepEqual(waits, [15000], "the date is 15 s after the frozen clock's 00:00:30");
});
