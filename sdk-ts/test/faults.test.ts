// Every fault POST /_sandbox/faults can plan, met by the SDK's retrying
// fetch as a real network's failures would be.
import assert from "node:assert/strict";
import { test } from "node:test";
import { MalformedResponseError, NetworkError, TimeoutError, type RetryOptions } from "../src/client.ts";
import { checkout, eventually, journal, newAccount, planFault, useSandbox } from "./support.ts";

const baseUrl = useSandbox();

/** Retry options whose waits are recorded and return at once: the faults below are counted, not timed. */
function recordedWaits(extra: RetryOptions = {}): { waits: number[]; reasons: string[]; options: RetryOptions } {
  const waits: number[] = [];
  const reasons: string[] = [];
  return {
    waits,
    reasons,
    options: {
      ...extra,
      sleep: async (ms) => {
        waits.push(ms);
      },
      onRetry: ({ reason }) => reasons.push(reason),
    },
  };
}

test("an injected 500, 502, 503 or 504 is a typed error, and retried, a 503 after its Retry-After", async () => {
  for (const status of [500, 502, 503, 504]) {
    const { waits, options } = recordedWaits();
    const { api, once } = newAccount(baseUrl(), options);
    const retryAfter = status === 503 ? 3 : undefined;
    const plan = { method: "GET", path: "/v1/campaigns", status, retryAfter } as const;

    const faultId = await planFault(once, plan);
    const failed = await once.GET("/v1/campaigns");
    assert.equal(failed.response.status, status);
    assert.equal(failed.response.headers.get("X-Sandbox-Fault"), faultId);
    assert.equal(failed.error?.error.status, status);
    assert.equal(failed.error?.error.code, status === 500 ? "INTERNAL_ERROR" : "INJECTED_FAILURE");
    assert.equal(failed.response.headers.get("Retry-After"), retryAfter === undefined ? null : String(retryAfter));

    const retriedId = await planFault(once, plan);
    const retried = await api.GET("/v1/campaigns");
    assert.equal(retried.response.status, 200, `after an injected ${status}`);
    assert.equal(retried.data?.data.items.length, 4);
    assert.deepEqual(waits, [status === 503 ? 3000 : 100], `the client's waits after a ${status}`);

    const sent = await journal(once, "GET", "/v1/campaigns");
    assert.deepEqual(
      sent.map((r) => [r.status, r.fault?.id ?? null]),
      [[200, null], [status, retriedId], [status, faultId]],
    );
  }
});

test("docs/controls.md's {\"status\":429}, optional fields left out, makes the next /v1 request a 429 with Retry-After: 1", async () => {
  const { once } = newAccount(baseUrl());
  const faultId = await planFault(once, { status: 429 });
  const refused = await once.GET("/v1/bugs");
  assert.equal(refused.response.status, 429);
  assert.equal(refused.error?.error.code, "RATE_LIMIT_EXCEEDED");
  assert.equal(refused.response.headers.get("Retry-After"), "1");
  assert.equal(refused.response.headers.get("X-Sandbox-Fault"), faultId);
  assert.equal((await once.GET("/v1/bugs")).response.status, 200, "the fault hit one request only");
});

const lostAnswers = { reset: "a reset connection", close: "a connection closed unanswered", truncate: "a body cut short" };
for (const network of ["reset", "close", "truncate"] as const) {
  test(`${lostAnswers[network]} is a NetworkError, and a retry gets the whole answer`, async () => {
    const { waits, reasons, options } = recordedWaits();
    const { api, once } = newAccount(baseUrl(), options);
    const campaign = (await once.POST("/v1/campaigns", { body: checkout })).data!.data;
    const get = { params: { path: { id: campaign.id } } };
    const plan = { method: "GET", path: "/v1/campaigns/*", network } as const;

    await planFault(once, plan);
    await assert.rejects(once.GET("/v1/campaigns/{id}", get), NetworkError);

    await planFault(once, plan);
    const retried = await api.GET("/v1/campaigns/{id}", get);
    assert.deepEqual(retried.data?.data, campaign);
    assert.deepEqual(reasons, ["NetworkError"]);
    assert.deepEqual(waits, [100]);

    // A truncated answer's status line did go out; a reset or closed one sent nothing.
    const lost = network === "truncate" ? 200 : null;
    const sent = await journal(once, "GET", "/v1/campaigns/*");
    assert.deepEqual(
      sent.map((r) => [r.status, r.fault?.network ?? null]),
      [[200, null], [lost, network], [lost, network]],
    );
  });
}

test("a 200 whose body is not JSON is a MalformedResponseError, not retried", async () => {
  const { reasons, options } = recordedWaits();
  const { api } = newAccount(baseUrl(), options);
  const faultId = await planFault(api, { path: "/v1/testers", network: "malformed" });

  const failure = await api.GET("/v1/testers").then(
    () => assert.fail("a malformed body was accepted"),
    (err: unknown) => err,
  );
  assert.ok(failure instanceof MalformedResponseError, String(failure));
  assert.equal(failure.status, 200);
  assert.equal(failure.fault, faultId);
  assert.ok(failure.cause instanceof SyntaxError);
  assert.deepEqual(reasons, []);

  const next = await api.GET("/v1/testers");
  assert.equal(next.data?.data.items.length, 6, "the fault hit one request only");
});

test("a trickled body arrives whole, in pieces", async () => {
  const { key, api } = newAccount(baseUrl());
  const campaign = (await api.POST("/v1/campaigns", { body: checkout })).data!.data;
  const plan = { method: "GET", path: "/v1/campaigns/*", network: "trickle", trickleMs: 300 } as const;

  await planFault(api, plan);
  const raw = await fetch(`${baseUrl()}/v1/campaigns/${campaign.id}`, { headers: { Authorization: `Bearer ${key}` } });
  let pieces = 0;
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of raw.body!) {
    pieces++;
    text += decoder.decode(chunk, { stream: true });
  }
  assert.ok(pieces > 1, `the body came in ${pieces} piece`);
  assert.deepEqual(JSON.parse(text).data, campaign);

  const faultId = await planFault(api, plan);
  const trickled = await api.GET("/v1/campaigns/{id}", { params: { path: { id: campaign.id } } });
  assert.equal(trickled.response.headers.get("X-Sandbox-Fault"), faultId);
  assert.deepEqual(trickled.data?.data, campaign);
});

test("a delayed answer times out through the AbortSignal, is retried, and the journal marks it abandoned", async () => {
  const { reasons, options } = recordedWaits({ timeoutMs: 200 });
  const { api, once } = newAccount(baseUrl(), options);
  const plan = { method: "GET", path: "/v1/analytics", delayMs: 20000 } as const;

  const faultId = await planFault(once, plan);
  const retried = await api.GET("/v1/analytics");
  assert.equal(retried.response.status, 200);
  assert.equal(retried.data?.data.campaigns, 4);
  assert.deepEqual(reasons, ["TimeoutError"]);

  const abandoned = await eventually(async () => {
    const sent = await journal(once, "GET", "/v1/analytics");
    return sent.find((r) => r.fault?.id === faultId && r.abandoned);
  });
  assert.equal(abandoned.status, null);

  const impatient = newAccount(baseUrl(), { attempts: 1, timeoutMs: 200 });
  await planFault(impatient.api, plan);
  await assert.rejects(impatient.api.GET("/v1/analytics"), TimeoutError);
});

test("a fault on POST /v1/campaigns leaves every other route alone", async () => {
  const { waits, options } = recordedWaits();
  const { api, once } = newAccount(baseUrl(), options);
  const plan = { method: "POST", path: "/v1/campaigns", status: 503, retryAfter: 2 } as const;
  const faultId = await planFault(once, plan);

  const listed = await once.GET("/v1/campaigns");
  assert.equal(listed.response.status, 200);
  assert.equal(listed.response.headers.get("X-Sandbox-Fault"), null);
  const planned = (await once.GET("/_sandbox/faults")).data!.data.items;
  assert.deepEqual(planned.map((f) => [f.id, f.count, f.fired]), [[faultId, 1, 0]]);

  const refused = await once.POST("/v1/campaigns", { body: checkout });
  assert.equal(refused.response.status, 503);
  assert.equal(refused.error?.error.code, "INJECTED_FAILURE");
  assert.equal(refused.response.headers.get("Retry-After"), "2");

  await planFault(once, plan);
  const created = await api.POST("/v1/campaigns", { body: checkout });
  assert.equal(created.data?.data.status, "draft");
  assert.deepEqual(waits, [2000]);
  const campaigns = (await once.GET("/v1/campaigns", { params: { query: { limit: 100 } } })).data!.data.items;
  assert.equal(campaigns.length, 5, "the refused creates created nothing, the retried one created one campaign");
});

test("a seeded rate fault hits the same requests every run, until cleared", async () => {
  const plan = { method: "GET", path: "/v1/testers", status: 500, rate: 0.5, seed: 7 } as const;
  const runs: number[][] = [];
  for (let run = 0; run < 2; run++) {
    const { once } = newAccount(baseUrl());
    await planFault(once, plan);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await once.GET("/v1/testers")).response.status);
    runs.push(statuses);

    const [fault] = (await once.GET("/_sandbox/faults")).data!.data.items;
    assert.equal(fault?.count, null, "a rate fault stays until cleared");
    assert.equal(fault?.fired, statuses.filter((s) => s === 500).length);
    const cleared = await once.DELETE("/_sandbox/faults");
    assert.equal(cleared.data?.data.cleared, 1);
    assert.equal((await once.GET("/v1/testers")).response.status, 200);
  }
  assert.deepEqual(runs[1], runs[0]);
  assert.ok(runs[0]!.includes(500) && runs[0]!.includes(200), `hits: ${runs[0]}`);
});
