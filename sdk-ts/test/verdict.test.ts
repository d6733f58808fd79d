// The sandbox's verdict on the client: run the calls, then assert that the
// SDK held the client rules. The sample client of src/client.ts holds every
// one when it waits as it should; made to skip its waits, it retries a 503
// before its Retry-After, and the verdict fails the test with the rule.
import assert from "node:assert/strict";
import { once as onceEvent } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { NetworkError, sdkClient, type SdkClient } from "../src/client.ts";
import { assertClientRulesHeld, fetchVerdict } from "../src/verdict.ts";
import { verifyWebhookSignature } from "../src/webhook.ts";
import { checkout, newAccount, planFault, useSandbox } from "./support.ts";

const frozenAt = Date.parse("2026-01-01T00:00:30Z");
const baseUrl = useSandbox(["-frozen-clock", "2026-01-01T00:00:30Z"]);

/** The sample client for a new account, whose waits move the account's frozen clock, or, with `skipWaits`, are not made at all. */
function account(skipWaits = false): { key: string; api: SdkClient; once: SdkClient } {
  const { key, once } = newAccount(baseUrl());
  const api = sdkClient(baseUrl(), key, {
    sleep: async (ms) => {
      if (skipWaits) return;
      const moved = await once.POST("/_sandbox/clock", { body: { advance: `${ms}ms` } });
      assert.equal(moved.error, undefined);
    },
  });
  return { key, api, once };
}

test("a client that retries a 503 before its Retry-After fails the verdict, with the rule and what it did", async () => {
  const { key, api, once } = account(true);
  await planFault(once, { method: "GET", path: "/v1/campaigns", status: 503 });
  const { response } = await api.GET("/v1/campaigns");
  assert.equal(response.status, 200);

  await assert.rejects(assertClientRulesHeld(baseUrl(), key), (err: Error) => {
    assert.equal(err.name, "AssertionError");
    assert.match(err.message, /^the client broke client rules of docs\/contract\.md:\nCLI-6 \(should\), broken 1 of 1 times: /);
    assert.match(
      err.message,
      /\n {2}- GET \/v1\/campaigns \(request 1\) was answered 503 with Retry-After asking for 1\.000 s, and GET \/v1\/campaigns \(request 2\) was sent 0\.\d{3} s later/,
    );
    return true;
  });
});

test("the same client waiting out Retry-After holds the rule", async () => {
  const { key, api, once } = account();
  await planFault(once, { method: "GET", path: "/v1/campaigns", status: 503 });
  const { response } = await api.GET("/v1/campaigns");
  assert.equal(response.status, 200);

  const verdict = await assertClientRulesHeld(baseUrl(), key);
  assert.equal(verdict.rules.find((r) => r.id === "CLI-6")?.outcome, "held");
  assert.equal(verdict.lastRequest, 2);
});

test("the sample client holds every client rule through a suite's worth of calls and deliveries", async (t) => {
  const { key, api, once } = account();

  // A receiver that verifies each delivery's signature and its timestamp
  // against its clock, which is the account's.
  let secret = "";
  const receiver = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const timestamp = String(req.headers["webhook-timestamp"]);
    const fresh = Math.abs(Number(timestamp) * 1000 - frozenAt) <= 5 * 60 * 1000;
    const genuine = verifyWebhookSignature(secret, timestamp, Buffer.concat(chunks), String(req.headers["webhook-signature"]));
    res.writeHead(genuine && fresh ? 204 : 400).end();
  });
  receiver.listen(0, "127.0.0.1");
  await onceEvent(receiver, "listening");
  t.after(() => {
    receiver.closeAllConnections();
    receiver.close();
  });
  const { port } = receiver.address() as AddressInfo;
  const registered = await api.POST("/v1/webhooks", { body: { url: `http://127.0.0.1:${port}/hooks`, events: ["campaign.created"] } });
  secret = registered.data!.data.secret;
  for (const webhook of ["badSignature", "staleTimestamp"] as const) {
    await planFault(once, { event: "campaign.created", webhook });
  }
  for (let i = 0; i < 3; i++) assert.equal((await api.POST("/v1/campaigns", { body: checkout })).response.status, 200);
  const settled = await once.POST("/_sandbox/deliveries/settle", { body: {} });
  assert.equal(settled.data?.data.settled, true);

  // Errors it must not retry: a 404, a 400, a 409.
  assert.equal((await api.GET("/v1/campaigns/{id}", { params: { path: { id: "cmp_999999" } } })).response.status, 404);
  assert.equal((await api.POST("/v1/campaigns", { body: { ...checkout, name: "" } })).response.status, 400);
  assert.equal((await api.PATCH("/v1/bugs/{id}", { params: { path: { id: "bug_000001" } }, body: { status: "new" } })).response.status, 409);

  // Failures it retries, waiting as told or backing off.
  await planFault(once, { method: "GET", path: "/v1/testers", status: 503, retryAfter: 2 });
  await planFault(once, { method: "GET", path: "/v1/analytics", status: 500, count: 2 });
  await planFault(once, { method: "POST", path: "/v1/campaigns", status: 429, retryAfter: 1 });
  assert.equal((await api.GET("/v1/testers")).response.status, 200);
  assert.equal((await api.GET("/v1/analytics")).response.status, 200);
  assert.equal((await api.POST("/v1/campaigns", { body: checkout })).response.status, 200);

  // A POST whose answer was lost goes to the caller, not again to the API.
  await planFault(once, { method: "POST", path: "/v1/campaigns", network: "truncate" });
  await assert.rejects(api.POST("/v1/campaigns", { body: { ...checkout, name: "Lost" } }), NetworkError);

  const verdict = await assertClientRulesHeld(baseUrl(), key);
  const outcomes = Object.fromEntries(verdict.rules.map((r) => [r.id, r.outcome]));
  for (const id of ["CLI-1", "CLI-2", "CLI-3", "CLI-4", "CLI-6", "CLI-7", "CLI-8", "CLI-9", "CLI-11", "CLI-12", "CLI-13", "CLI-14"]) {
    assert.equal(outcomes[id], "held", `${id} was not exercised or not held: ${JSON.stringify(outcomes)}`);
  }
});

test("a window judges only what came after an earlier verdict", async () => {
  const { key, api, once } = account(true);
  await planFault(once, { method: "GET", path: "/v1/campaigns", status: 503 });
  await api.GET("/v1/campaigns");
  const before = await fetchVerdict(baseUrl(), key);
  assert.equal(before.held, false);
  await api.GET("/v1/testers");
  const after = await assertClientRulesHeld(baseUrl(), key, { after: before.lastRequest });
  assert.equal(after.requests, 1);
});
