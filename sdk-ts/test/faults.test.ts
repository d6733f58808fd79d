// Every fault POST /_sandbox/faults can plan, met by the SDK's retrying
// fetch as a real network's failures would be, and retried only where a
// second request is safe.
import assert from "node:assert/strict";
import { once as nextEvent } from "node:events";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { test } from "node:test";
import { freshKey } from "../harness/sandbox.ts";
import { MalformedResponseError, NetworkError, TimeoutError, sdkClient, type RetryOptions } from "../src/client.ts";
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
  // The budget is each try's, the retry's too: 200 ms timed the retry out
  // as well once in 50 runs at a load average of 17.
  const { reasons, options } = recordedWaits({ timeoutMs: 2000 });
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
  const { once } = newAccount(baseUrl());
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

  const campaigns = (await once.GET("/v1/campaigns", { params: { query: { limit: 100 } } })).data!.data.items;
  assert.equal(campaigns.length, 4, "the refused create created nothing");
});

test("a POST is not retried after a 5xx, which may come after the record was created", async () => {
  for (const status of [500, 502, 503, 504]) {
    const { waits, reasons, options } = recordedWaits();
    const { api, once } = newAccount(baseUrl(), options);
    const faultId = await planFault(once, { method: "POST", path: "/v1/campaigns", status, retryAfter: 0 });

    const failed = await api.POST("/v1/campaigns", { body: checkout });
    assert.equal(failed.response.status, status);
    assert.equal(failed.response.headers.get("X-Sandbox-Fault"), faultId);
    assert.deepEqual([reasons, waits], [[], []], `the client retried a POST after a ${status}`);
    assert.equal((await journal(once, "POST", "/v1/campaigns")).length, 1, `POSTs sent after a ${status}`);
  }
});

test("a POST is retried after a 429, which refuses it before it is carried out, and creates one record", async () => {
  const { waits, reasons, options } = recordedWaits();
  const { api, once } = newAccount(baseUrl(), options);
  const faultId = await planFault(once, { method: "POST", path: "/v1/campaigns", status: 429, retryAfter: 2 });

  const created = await api.POST("/v1/campaigns", { body: checkout });
  assert.equal(created.data?.data.status, "draft");
  assert.deepEqual([reasons, waits], [["status 429"], [2000]]);
  const sent = await journal(once, "POST", "/v1/campaigns");
  assert.deepEqual(
    sent.map((r) => [r.status, r.fault?.id ?? null]),
    [[200, null], [429, faultId]],
  );
  const campaigns = (await once.GET("/v1/campaigns", { params: { query: { limit: 100 } } })).data!.data.items;
  assert.equal(campaigns.length, 5, "one campaign created");
});

for (const network of ["reset", "close", "truncate"] as const) {
  test(`a POST is not retried after ${lostAnswers[network]}, though the retry would be for a GET`, async () => {
    const { reasons, options } = recordedWaits();
    const { api, once } = newAccount(baseUrl(), options);
    await planFault(once, { method: "POST", path: "/v1/campaigns", network });

    await assert.rejects(api.POST("/v1/campaigns", { body: checkout }), NetworkError);
    assert.deepEqual(reasons, []);
    assert.equal((await journal(once, "POST", "/v1/campaigns")).length, 1, "POSTs sent");
    // A truncated answer comes after the campaign was created: a retry would have made a second one.
    const campaigns = (await once.GET("/v1/campaigns", { params: { query: { limit: 100 } } })).data!.data.items;
    assert.equal(campaigns.length, network === "truncate" ? 5 : 4);
  });
}

test("a POST whose connection was refused, which sent nothing, is retried", async () => {
  // A port nothing listens on until the client's first wait, when a proxy
  // to the sandbox starts on it: the first try is refused, the second lands.
  const port = await freePort();
  const target = new URL(baseUrl());
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => socket.destroy());
      socket.on("close", () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
  });
  const reasons: string[] = [];
  const key = freshKey();
  const api = sdkClient(`http://127.0.0.1:${port}`, key, {
    sleep: async () => {
      proxy.listen(port, "127.0.0.1");
      await nextEvent(proxy, "listening");
    },
    onRetry: ({ reason }) => reasons.push(reason),
  });
  try {
    const created = await api.POST("/v1/campaigns", { body: checkout });
    assert.equal(created.data?.data.status, "draft");
    assert.deepEqual(reasons, ["NetworkError"]);
    const sent = await journal(sdkClient(baseUrl(), key, { attempts: 1 }), "POST", "/v1/campaigns");
    assert.deepEqual(sent.map((r) => r.status), [200], "one POST reached the sandbox");
  } finally {
    for (const socket of sockets) socket.destroy();
    proxy.close();
  }
});

/** A loopback port that was free a moment ago, and that nothing listens on now. */
async function freePort(): Promise<number> {
  const probe = createServer().listen(0, "127.0.0.1");
  await nextEvent(probe, "listening");
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await nextEvent(probe, "close");
  return port;
}

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
