// The calls an SDK user makes every day, through the generated types.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sdkClient, userAgent } from "../src/client.ts";
import { checkout, journal, newAccount, useSandbox } from "./support.ts";

const baseUrl = useSandbox();

test("a created campaign reads back as it was created", async () => {
  const { api } = newAccount(baseUrl());
  const created = await api.POST("/v1/campaigns", { body: checkout });
  assert.equal(created.error, undefined);
  const campaign = created.data!.data;
  assert.match(campaign.id, /^cmp_/);
  assert.equal(campaign.status, "draft");
  assert.equal(campaign.rewardPerBug, 19.99);

  const read = await api.GET("/v1/campaigns/{id}", { params: { path: { id: campaign.id } } });
  assert.deepEqual(read.data?.data, campaign);
});

test("walking every page lists each campaign once, newest first", async () => {
  const { api } = newAccount(baseUrl());
  const created: string[] = [];
  for (let i = 0; i < 7; i++) {
    const { data } = await api.POST("/v1/campaigns", { body: { ...checkout, name: `Campaign ${i}` } });
    created.push(data!.data.id);
  }

  const seen: { id: string; createdAt: string }[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const { data, error } = await api.GET("/v1/campaigns", { params: { query: { limit: 3, cursor } } });
    assert.equal(error, undefined);
    const page = data!.data;
    assert.ok(page.items.length <= 3);
    assert.equal(page.hasMore, page.nextCursor !== null);
    seen.push(...page.items);
    cursor = page.nextCursor ?? undefined;
    pages++;
  } while (cursor !== undefined);

  const ids = seen.map((c) => c.id);
  assert.equal(new Set(ids).size, ids.length, `repeated ids: ${ids}`);
  assert.deepEqual(ids.slice(0, created.length), created.toReversed(), "the new campaigns come first, newest first");
  assert.equal(ids.length, created.length + 4, "the 4 seeded campaigns follow");
  assert.equal(pages, Math.ceil(ids.length / 3));
  const times = seen.map((c) => c.createdAt);
  assert.deepEqual(times, times.toSorted().toReversed(), "createdAt never increases down the list");
});

test("a forbidden bug move is a typed 409 and changes nothing", async () => {
  const { api } = newAccount(baseUrl());
  const campaign = (await api.POST("/v1/campaigns", { body: checkout })).data!.data;
  const filed = await api.POST("/_sandbox/bugs", {
    body: { campaignId: campaign.id, title: "Crash on pay", severity: "high" },
  });
  const bug = filed.data!.data;
  assert.equal(bug.status, "new");

  const { data, error, response } = await api.PATCH("/v1/bugs/{id}", {
    params: { path: { id: bug.id } },
    body: { status: "resolved", resolution: "fixed" },
  });
  assert.equal(data, undefined);
  assert.equal(response.status, 409);
  assert.ok(error);
  assert.equal(error.success, false);
  assert.equal(error.error.code, "INVALID_STATUS_TRANSITION");
  assert.equal(error.error.status, 409);
  assert.match(error.error.message, /new/);
  assert.equal(error.error.details, undefined);

  const after = await api.GET("/v1/bugs", { params: { query: { campaignId: campaign.id } } });
  assert.deepEqual(after.data?.data.items.map((b) => b.status), ["new"]);
});

test("an invalid campaign is a 400 naming every invalid field", async () => {
  const { api } = newAccount(baseUrl());
  const { error, response } = await api.POST("/v1/campaigns", {
    body: { name: " ", platform: "ios", testersRequired: 0, rewardPerBug: 19.999 },
  });
  assert.equal(response.status, 400);
  assert.equal(error?.error.code, "VALIDATION_ERROR");
  const fields = error?.error.details?.map((d) => d.field).toSorted();
  assert.deepEqual(fields, ["name", "rewardPerBug", "testersRequired"]);
  for (const detail of error!.error.details!) assert.notEqual(detail.message, "");

  const list = await api.GET("/v1/campaigns", { params: { query: { limit: 100 } } });
  assert.equal(list.data?.data.items.length, 4, "nothing was created");
});

test("a live key and an expired key are refused with 401 INVALID_API_KEY", async () => {
  for (const key of ["svc_live_abcdef", "svc_test_expired123"]) {
    const api = sdkClient(baseUrl(), key, { attempts: 1 });
    const { error, response } = await api.GET("/v1/campaigns");
    assert.equal(response.status, 401, key);
    assert.equal(error?.error.code, "INVALID_API_KEY");
    assert.match(response.headers.get("WWW-Authenticate") ?? "", /^Bearer/);
  }
});

test("the journal shows what the client sent, with the key redacted", async () => {
  const { key, api } = newAccount(baseUrl());
  const created = await api.POST("/v1/campaigns", { body: checkout });
  assert.equal(created.response.status, 200);

  const [entry, ...older] = await journal(api, "POST", "/v1/campaigns");
  assert.equal(older.length, 0);
  assert.ok(entry);
  assert.equal(entry.method, "POST");
  assert.equal(entry.path, "/v1/campaigns");
  assert.equal(entry.status, 200);
  assert.equal(entry.abandoned, false);
  assert.deepEqual(entry.headers["User-Agent"], [userAgent]);
  assert.deepEqual(entry.headers["Content-Type"], ["application/json"]);
  assert.deepEqual(entry.headers["Authorization"], [`Bearer svc_test_…${key.slice(-4)}`]);
  assert.deepEqual(JSON.parse(entry.body), checkout);
  assert.equal(entry.bodyTruncated, false);

  const whole = await api.GET("/_sandbox/requests");
  assert.ok(!JSON.stringify(whole.data).includes(key), "the key appears whole in the journal");
});
