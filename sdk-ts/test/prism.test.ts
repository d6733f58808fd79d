// Prism, the validating proxy many SDK teams put between their tests and a
// server, reading the document the sandbox serves: a valid request to every
// operation, and the sandbox's answer to it, must raise no violation.
import assert from "node:assert/strict";
import { test } from "node:test";
import { startPrismProxy } from "../harness/prism.ts";
import { checkout, eventually, newAccount, planFault, useSandbox, useServer } from "./support.ts";

const sandboxUrl = useSandbox(["-frozen-clock", "2026-01-01T00:00:00Z"]);
const prismUrl = useServer(() => startPrismProxy(sandboxUrl()));

const operationMethods = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

/** Every operation of the document the sandbox serves, as `METHOD /path/{param}`. */
async function documentedOperations(): Promise<string[]> {
  const res = await fetch(new URL("/openapi.json", sandboxUrl()));
  const document = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(document.paths)
    .flatMap(([path, item]) => Object.keys(item).filter((m) => operationMethods.has(m)).map((m) => `${m.toUpperCase()} ${path}`))
    .toSorted();
}

test("through Prism, valid requests to every operation raise no violation", async () => {
  const { once: api } = newAccount(prismUrl());
  const exercised = new Set<string>();
  const violations: string[] = [];
  api.use({
    onResponse({ request, schemaPath, response }) {
      const operation = `${request.method} ${schemaPath}`;
      exercised.add(operation);
      const found = response.headers.get("sl-violations");
      if (found !== null) violations.push(`${operation} → ${response.status}: ${found}`);
    },
  });

  assert.equal((await api.GET("/healthz")).response.status, 200);
  assert.equal((await api.GET("/openapi.json")).response.status, 200);
  assert.equal((await api.GET("/openapi.yaml", { parseAs: "text" })).response.status, 200);

  // Two-decimal amounts that are not exact binary fractions: a multipleOf 0.01 would refuse some.
  for (const rewardPerBug of [19.99, 0.07, 1.1, 4.35, 0.01, 1234.56]) {
    const created = await api.POST("/v1/campaigns", { body: { ...checkout, rewardPerBug } });
    assert.equal(created.data?.data.rewardPerBug, rewardPerBug);
  }
  const page = (await api.GET("/v1/campaigns", { params: { query: { limit: 2 } } })).data!.data;
  const cursor = page.nextCursor ?? undefined;
  assert.ok(cursor);
  await api.GET("/v1/campaigns", { params: { query: { limit: 2, cursor } } });
  const campaign = page.items[0]!;
  await api.GET("/v1/campaigns/{id}", { params: { path: { id: campaign.id } } });
  const missing = await api.GET("/v1/campaigns/{id}", { params: { path: { id: "cmp_999999" } } });
  assert.equal(missing.response.status, 404);

  const bug = (await api.POST("/_sandbox/bugs", {
    body: { campaignId: campaign.id, title: "Crash on pay", severity: "critical", description: "Tapping Pay closes the app." },
  })).data!.data;
  await api.GET("/v1/bugs", { params: { query: { campaignId: campaign.id, status: "new" } } });
  const confirmed = await api.PATCH("/v1/bugs/{id}", { params: { path: { id: bug.id } }, body: { status: "confirmed" } });
  assert.equal(confirmed.data?.data.status, "confirmed");
  const refused = await api.PATCH("/v1/bugs/{id}", { params: { path: { id: bug.id } }, body: { status: "new" } });
  assert.equal(refused.response.status, 409);

  const webhook = (await api.POST("/v1/webhooks", {
    body: { url: "http://127.0.0.1:9/hooks", events: ["campaign.created", "bug.created", "bug.updated"] },
  })).data!.data;
  await api.POST("/v1/campaigns", { body: checkout });
  await eventually(async () => {
    const { data } = await api.GET("/_sandbox/deliveries");
    return data?.data.items.find((d) => d.webhookId === webhook.id);
  });
  await api.GET("/v1/testers");
  await api.GET("/v1/analytics");
  await api.GET("/v1/analytics", { params: { query: { campaignId: campaign.id } } });
  await api.GET("/_sandbox/events", { params: { query: { limit: 5 } } });

  await planFault(api, { method: "GET", path: "/v1/testers", status: 503, retryAfter: 2 });
  const injected = await api.GET("/v1/testers");
  assert.equal(injected.response.status, 503);
  await planFault(api, { status: 429, count: 2 });
  await api.GET("/_sandbox/faults");
  await api.DELETE("/_sandbox/faults");
  await api.GET("/_sandbox/requests", { params: { query: { method: "GET", path: "/v1/testers" } } });
  await api.GET("/_sandbox/verdict", { params: { query: { after: 1 } } });
  await api.POST("/_sandbox/clock", { body: { advance: "90s" } });
  await api.GET("/_sandbox/clock");
  await api.POST("/_sandbox/deliveries/settle", { body: { timeoutMs: 2000 } });
  await api.POST("/_sandbox/reset");

  assert.deepEqual(violations, []);
  assert.deepEqual([...exercised].toSorted(), await documentedOperations(), "operations left unchecked");
});

test("through Prism, a request that breaks the document is flagged", async () => {
  const { once: api } = newAccount(prismUrl());
  const { response } = await api.POST("/v1/campaigns", {
    body: { ...checkout, rewardPerBug: "19.99" as unknown as number },
  });
  assert.equal(response.status, 400, "the sandbox refuses it too");
  const violations = response.headers.get("sl-violations");
  assert.ok(violations, "Prism did not flag a string amount");
  assert.match(violations, /rewardPerBug/);
});
