// The importable controls client and receiver, against a sandbox with a
// frozen clock.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Receiver, sandboxControls } from "../src/sandbox.ts";
import { checkout, newAccount, useSandbox } from "./support.ts";

const baseUrl = useSandbox(["-frozen-clock", "2026-01-01T00:00:00Z"]);

test("the receiver verifies deliveries against the account's clock, and the controls read their attempts at once", async (t) => {
  const receiver = await Receiver.start();
  t.after(() => receiver.close());
  const { key, api } = newAccount(baseUrl());
  const controls = sandboxControls(baseUrl(), key);
  const webhook = (await api.POST("/v1/webhooks", { body: { url: receiver.url, events: ["campaign.created"] } })).data!.data;
  receiver.setSecret(webhook.secret);
  await controls.planFault({ event: "campaign.created", webhook: "staleTimestamp" });

  await api.POST("/v1/campaigns", { body: checkout });
  const [stale] = await receiver.next(1);
  assert.equal(stale?.verdict, "staleTimestamp");
  await api.POST("/v1/campaigns", { body: checkout });
  const [, fresh] = await receiver.next(2);
  assert.equal(fresh?.verdict, "ok");

  const attempts = await controls.deliveries(2);
  assert.deepEqual(attempts.map((a) => a.statusCode), [204, 400]);
});

test("a lost answer: the POST is carried out, the client gets none, and the journal says so", async () => {
  const { key, once } = newAccount(baseUrl());
  const controls = sandboxControls(baseUrl(), key);
  await controls.planFault({ method: "POST", path: "/v1/campaigns", network: "reset", phase: "after" });
  await assert.rejects(once.POST("/v1/campaigns", { body: checkout }));
  const [entry] = await controls.requests({ method: "POST", path: "/v1/campaigns" });
  assert.equal(entry?.carriedOut, true);
  assert.equal(entry?.received, "nothing");
  assert.equal(entry?.status, 200);
  assert.equal(await controls.clearFaults(), 0);
});
