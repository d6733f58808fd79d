// A catalogue of clients, each with a key of its own, held to the verdict:
// for every client rule, clients that must hold it (concurrent, jittered,
// retried by their HTTP layer, making separate calls, polling) and clients
// that must break it (every misbehaviour docs/contract.md lists). A client
// must break exactly the rules it is listed with, and hold those it meets:
// a false alarm fails the test as a miss does. Waits move the account's
// frozen clock.
import assert from "node:assert/strict";
import { once as onceEvent } from "node:events";
import { createHmac } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { freshKey } from "../harness/sandbox.ts";
import { brokenRules, fetchVerdict } from "../src/verdict.ts";
import { checkout, eventually, useSandbox } from "./support.ts";

const frozenAt = Date.parse("2026-01-01T00:00:30Z");
const baseUrl = useSandbox(["-frozen-clock", "2026-01-01T00:00:30Z", "-webhook-loopback-only", "-webhook-attempts", "1"]);
const limitedUrl = useSandbox(["-frozen-clock", "2026-01-01T00:00:30Z", "-rate-limit-minute", "2"]);

const campaign = JSON.stringify(checkout);

/** A client of its own key, sending what it is told as an SDK would. */
class Client {
  readonly key = freshKey();
  scheme = "Bearer";
  constructor(readonly base: string) {}

  /** Sends one request; undefined when the exchange failed. */
  async send(method: string, path: string, body?: string | Blob, headers: Record<string, string> = {}, signal?: AbortSignal) {
    const type: Record<string, string> = typeof body === "string" ? { "Content-Type": "application/json" } : {};
    try {
      const res = await fetch(this.base + path, {
        method,
        body,
        signal,
        headers: { Authorization: `${this.scheme} ${this.key}`, ...type, ...headers },
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, text };
    } catch {
      return undefined;
    }
  }

  async control(method: string, path: string, body?: unknown) {
    const res = await fetch(this.base + path, {
      method,
      headers: { Authorization: `Bearer ${this.key}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    assert.equal(res.status, 200, `${method} ${path}: ${text}`);
    return JSON.parse(text).data;
  }

  plan(fault: object) {
    return this.control("POST", "/_sandbox/faults", fault);
  }

  /** A wait of the client, made on the account's frozen clock. */
  wait(ms: number) {
    return this.control("POST", "/_sandbox/clock", { advance: `${ms}ms` });
  }

  /** Waits until the journal has no request pending: every one answered or seen given up. */
  settle() {
    return eventually(async () => {
      const page = await this.control("GET", "/_sandbox/requests?limit=100");
      return !page.items.some((r: { pending: boolean }) => r.pending);
    });
  }
}

/** Plans `status` on every send of GET /v1/testers and sends it once, then once after each wait. */
async function retryWaiting(c: Client, status: number, waits: number[]) {
  await c.plan({ method: "GET", path: "/v1/testers", status, count: waits.length + 1 });
  await c.send("GET", "/v1/testers");
  for (const ms of waits) {
    if (ms > 0) await c.wait(ms);
    await c.send("GET", "/v1/testers");
  }
}

/**
 * Sends the same request n times at once, as n workers would. A server
 * that serves them one after another, none overlapping, sees requests sent
 * in turn: the first is held back 300 ms, so that the others are sent while
 * it is in flight, as a slower answer would keep them, and answered as
 * `fault` says, if anything.
 */
async function parallel(c: Client, n: number, path: string, fault: object = {}) {
  await c.plan({ method: "GET", path, delayMs: 300, ...fault });
  await Promise.all(Array.from({ length: n }, () => c.send("GET", path)));
}

/** A receiver on loopback that verifies signatures and timestamps when `verify`, and answers `status`. */
async function receiver(c: Client, verify: boolean, status: number, t: { after: (fn: () => void) => void }) {
  let secret = "";
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const stamp = String(req.headers["webhook-timestamp"]);
    const want = "v1=" + createHmac("sha256", secret).update(`${stamp}.`).update(Buffer.concat(chunks)).digest("hex");
    const fresh = Math.abs(Number(stamp) * 1000 - frozenAt) <= 5 * 60 * 1000;
    res.writeHead(verify && (req.headers["webhook-signature"] !== want || !fresh) ? 400 : status).end();
  });
  server.listen(0, "127.0.0.1");
  await onceEvent(server, "listening");
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as AddressInfo;
  const hook = await c.control("POST", "/v1/webhooks", { url: `http://127.0.0.1:${port}/hook`, events: ["campaign.created"] });
  secret = hook.secret;
}

/** Makes one campaign.created delivery, touched by the webhook fault given, and waits until it was attempted. */
async function deliver(c: Client, webhook?: string) {
  if (webhook) await c.plan({ event: "campaign.created", webhook });
  assert.equal((await c.send("POST", "/v1/campaigns", campaign))?.status, 200);
  await c.control("POST", "/_sandbox/deliveries/settle", {});
}

/** Sends a POST again after the fault given lost its answer. */
function lostPost(fault: object) {
  return async (c: Client) => {
    await c.plan({ method: "POST", path: "/v1/campaigns", ...fault });
    await c.send("POST", "/v1/campaigns", campaign);
    await c.send("POST", "/v1/campaigns", campaign);
  };
}

/** Sends a POST into a 30 s delay and gives up on it once the sandbox has it, then sends it again. */
function givenUp(fault: object) {
  return async (c: Client) => {
    await c.plan({ method: "POST", path: "/v1/campaigns", delayMs: 30000, ...fault });
    const gaveUp = new AbortController();
    const sent = c.send("POST", "/v1/campaigns", campaign, {}, gaveUp.signal);
    await eventually(async () => (await c.control("GET", "/_sandbox/requests?limit=1")).items[0]?.pending);
    gaveUp.abort();
    assert.equal(await sent, undefined);
    await c.settle();
    await c.send("POST", "/v1/campaigns", campaign);
  };
}

interface Entry {
  name: string;
  /** The rules the client must be judged on, and hold. */
  meets?: string[];
  /** The rules it must break, no more and no fewer. */
  breaks?: string[];
  /** What the why of the first break of breaks[0] must say. */
  why?: RegExp;
  limited?: boolean;
  run: (c: Client, t: { after: (fn: () => void) => void }) => Promise<void>;
}

const catalogue: Entry[] = [
  { name: "Bearer, one space", meets: ["CLI-1"], run: async (c) => void (await c.send("GET", "/v1/campaigns")) },
  { name: "scheme in lower case", breaks: ["CLI-1"], run: async (c) => ((c.scheme = "bearer"), void (await c.send("GET", "/v1/campaigns"))) },

  { name: "JSON body with a charset", meets: ["CLI-2"], run: async (c) => void (await c.send("POST", "/v1/campaigns", campaign, { "Content-Type": "application/json; charset=utf-8" })) },
  { name: "JSON body sent as text/plain", breaks: ["CLI-2"], run: async (c) => void (await c.send("POST", "/v1/campaigns", campaign, { "Content-Type": "text/plain" })) },
  { name: "JSON body without Content-Type", breaks: ["CLI-2"], run: async (c) => void (await c.send("POST", "/v1/campaigns", new Blob([campaign]))) },

  { name: "a campaign named like a key", meets: ["CLI-3"], run: async (c) => void (await c.send("POST", "/v1/campaigns", JSON.stringify({ ...checkout, name: "svc_test_example" }))) },
  { name: "its key in the query", breaks: ["CLI-3"], run: async (c) => void (await c.send("GET", `/v1/campaigns?api_key=${c.key}`)) },
  { name: "its key JSON-escaped in a body", breaks: ["CLI-3"], run: async (c) => void (await c.send("POST", "/v1/campaigns", `{"name":"${c.key.replaceAll("_", "\\u005f")}","platform":"ios","testersRequired":5,"rewardPerBug":10}`)) },

  {
    name: "waits out a 429's Retry-After",
    meets: ["CLI-4", "CLI-6"],
    run: async (c) => {
      await c.plan({ path: "/v1/campaigns", status: 429, retryAfter: 2 });
      await c.send("GET", "/v1/campaigns");
      await c.wait(2000);
      await c.send("GET", "/v1/testers");
    },
  },
  {
    name: "GETs in flight when a 429 arrives",
    meets: ["CLI-4"],
    run: (c) => parallel(c, 5, "/v1/campaigns", { status: 429, retryAfter: 2 }),
  },
  {
    name: "another request before a 429's Retry-After",
    breaks: ["CLI-4"],
    run: async (c) => {
      await c.plan({ path: "/v1/campaigns", status: 429, retryAfter: 2 });
      await c.send("GET", "/v1/campaigns");
      await c.wait(1000);
      await c.send("GET", "/v1/testers");
    },
  },

  {
    name: "waits for X-RateLimit-Reset",
    meets: ["CLI-5"],
    limited: true,
    run: async (c) => {
      await c.send("GET", "/v1/campaigns");
      const last = await c.send("GET", "/v1/testers");
      await c.wait(Number(last!.headers.get("X-RateLimit-Reset")) * 1000 - frozenAt);
      await c.send("GET", "/v1/analytics");
    },
  },
  {
    name: "sends before X-RateLimit-Reset",
    breaks: ["CLI-5"],
    limited: true,
    run: async (c) => {
      for (const path of ["/v1/campaigns", "/v1/testers", "/v1/analytics"]) await c.send("GET", path);
    },
  },

  {
    name: "parallel identical GETs, one answered 503",
    meets: ["CLI-6"],
    run: (c) => parallel(c, 5, "/v1/campaigns", { status: 503, retryAfter: 1 }),
  },
  {
    name: "retries a 503 before its Retry-After",
    breaks: ["CLI-6"],
    run: async (c) => {
      await c.plan({ path: "/v1/campaigns", status: 503, retryAfter: 1 });
      await c.send("GET", "/v1/campaigns");
      await c.send("GET", "/v1/campaigns");
    },
  },

  { name: "gives up after 5 sends", meets: ["CLI-7", "CLI-8"], run: (c) => retryWaiting(c, 500, [200, 400, 800, 1600]) },
  {
    name: "two calls 30 s apart, each retried twice",
    meets: ["CLI-7", "CLI-8"],
    run: async (c) => {
      await retryWaiting(c, 500, [200, 400]);
      await c.wait(30000);
      await retryWaiting(c, 500, [200, 400]);
    },
  },
  { name: "sends 8 times in a row", breaks: ["CLI-7"], why: /sent 8 times in a row/, run: (c) => retryWaiting(c, 500, [200, 400, 800, 1600, 3200, 6400, 12800]) },

  { name: "full jitter", meets: ["CLI-8"], run: (c) => retryWaiting(c, 500, [150, 500, 180]) },
  { name: "equal jitter", meets: ["CLI-8"], run: (c) => retryWaiting(c, 500, [130, 260, 700, 1100]) },
  { name: "decorrelated jitter", meets: ["CLI-8"], run: (c) => retryWaiting(c, 500, [250, 180, 420, 300]) },
  {
    name: "a GET its HTTP layer sends again on a new connection",
    meets: ["CLI-7"],
    run: async (c) => {
      await c.send("GET", "/v1/testers");
      await c.plan({ method: "GET", path: "/v1/campaigns", network: "close" });
      // As net/http does: a kept-alive connection closed before any answer byte is sent again at once.
      const first = await c.send("GET", "/v1/campaigns");
      if (first === undefined) assert.equal((await c.send("GET", "/v1/campaigns"))?.status, 200);
    },
  },
  { name: "retries at once", breaks: ["CLI-8"], run: (c) => retryWaiting(c, 500, [0, 0]) },
  { name: "a steady 150 ms pace", breaks: ["CLI-8"], run: (c) => retryWaiting(c, 500, [150, 150, 150, 150]) },

  {
    name: "polls a 404 until the record appears",
    meets: ["CLI-9"],
    run: async (c) => {
      await c.send("POST", "/v1/campaigns", campaign);
      await c.plan({ method: "GET", path: "/v1/campaigns/cmp_000001", status: 404, count: 2 });
      for (let i = 0; (await c.send("GET", "/v1/campaigns/cmp_000001"))?.status !== 200; i++) {
        assert.ok(i < 3, "the record never appeared");
        await c.wait(500);
      }
    },
  },
  { name: "five parallel identical 404s", meets: ["CLI-9"], run: (c) => parallel(c, 5, "/v1/campaigns/cmp_999999") },
  {
    name: "sends a 400 again unchanged",
    breaks: ["CLI-9"],
    run: async (c) => {
      await c.send("POST", "/v1/campaigns", '{"name":""}');
      await c.wait(1000);
      await c.send("POST", "/v1/campaigns", '{"name":""}');
    },
  },

  {
    name: "stops after a 401",
    meets: ["CLI-10"],
    run: async (c) => {
      await c.plan({ path: "/v1/campaigns", status: 401 });
      await c.send("GET", "/v1/campaigns");
    },
  },
  {
    name: "sends a 401 again",
    breaks: ["CLI-10"],
    run: async (c) => {
      await c.plan({ path: "/v1/campaigns", status: 401 });
      await c.send("GET", "/v1/campaigns");
      await c.wait(1000);
      await c.send("GET", "/v1/campaigns");
    },
  },

  {
    name: "a lost POST checked, no record found, sent again",
    meets: ["CLI-11"],
    run: async (c) => {
      await c.plan({ method: "POST", path: "/v1/campaigns", network: "reset" });
      await c.send("POST", "/v1/campaigns", campaign);
      assert.equal((await c.send("GET", "/v1/campaigns"))?.status, 200);
      await c.send("POST", "/v1/campaigns", campaign);
    },
  },
  { name: "a POST sent again after a reset once the API answered", breaks: ["CLI-11"], why: /two records/, run: lostPost({ network: "reset", phase: "after" }) },
  { name: "a POST sent again after a close before the API saw it", breaks: ["CLI-11"], why: /without checking/, run: lostPost({ network: "close" }) },
  { name: "a POST sent again after a truncated answer", breaks: ["CLI-11"], run: lostPost({ network: "truncate" }) },
  { name: "a POST sent again after an answer not in JSON", breaks: ["CLI-11"], run: lostPost({ network: "malformed" }) },
  { name: "a POST sent again after a 504", breaks: ["CLI-11"], run: lostPost({ status: 504, phase: "after" }) },
  { name: "a POST given up on and sent again", breaks: ["CLI-11"], why: /the client gave up/, run: givenUp({}) },
  { name: "a POST given up on during a delay after the API answered, sent again", breaks: ["CLI-11"], why: /carriedOut true/, run: givenUp({ phase: "after" }) },

  {
    name: "a receiver that verifies signatures and timestamps",
    meets: ["CLI-12", "CLI-13", "CLI-14"],
    run: async (c, t) => {
      await receiver(c, true, 204, t);
      for (const fault of ["badSignature", "staleTimestamp", undefined]) await deliver(c, fault);
    },
  },
  { name: "a receiver that accepts a forged signature", breaks: ["CLI-12"], run: async (c, t) => (await receiver(c, false, 200, t), await deliver(c, "badSignature")) },
  { name: "a receiver that accepts a stale timestamp", breaks: ["CLI-13"], run: async (c, t) => (await receiver(c, false, 200, t), await deliver(c, "staleTimestamp")) },
  { name: "a receiver that answers 500", breaks: ["CLI-14"], run: async (c, t) => (await receiver(c, true, 500, t), await deliver(c)) },
];

for (const entry of catalogue) {
  test(`catalogue: ${entry.name}`, async (t) => {
    const base = entry.limited ? limitedUrl() : baseUrl();
    const c = new Client(base);
    await entry.run(c, t);
    await c.settle();
    const verdict = await fetchVerdict(base, c.key);
    const broken = verdict.rules.filter((r) => r.outcome === "broken").map((r) => r.id);
    assert.deepEqual(broken, entry.breaks ?? [], brokenRules(verdict));
    for (const id of entry.meets ?? []) {
      assert.equal(verdict.rules.find((r) => r.id === id)?.outcome, "held", `${id} is not held`);
    }
    if (entry.why) assert.match(verdict.rules.find((r) => r.id === entry.breaks![0])?.breaks[0]?.why ?? "", entry.why);
  });
}

test("catalogue: every client rule has a client that holds it and one that breaks it", async () => {
  const verdict = await fetchVerdict(baseUrl(), freshKey());
  for (const { id } of verdict.rules) {
    assert.ok(catalogue.some((e) => e.meets?.includes(id)), `no client holds ${id}`);
    assert.ok(catalogue.some((e) => e.breaks?.includes(id)), `no client breaks ${id}`);
  }
});
