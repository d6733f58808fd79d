// A webhook delivered to a receiver on this machine, its signature checked
// with node:crypto as docs/webhooks.md says.
import assert from "node:assert/strict";
import { once as onceEvent } from "node:events";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import type { components } from "../build/api.d.ts";
import { verifyWebhookSignature } from "../src/webhook.ts";
import { checkout, eventually, newAccount, useSandbox } from "./support.ts";

const baseUrl = useSandbox();

interface Delivery {
  headers: IncomingHttpHeaders;
  body: Buffer;
}

test("a delivered campaign.created verifies with the webhook's secret, and a tampered body does not", async (t) => {
  let delivered: (delivery: Delivery) => void;
  const firstDelivery = new Promise<Delivery>((resolve) => (delivered = resolve));
  const receiver = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    res.writeHead(204).end();
    delivered({ headers: req.headers, body: Buffer.concat(chunks) });
  });
  receiver.listen(0, "127.0.0.1");
  await onceEvent(receiver, "listening");
  t.after(() => {
    receiver.closeAllConnections();
    receiver.close();
  });
  const { port } = receiver.address() as AddressInfo;

  const { api } = newAccount(baseUrl());
  const registered = await api.POST("/v1/webhooks", {
    body: { url: `http://127.0.0.1:${port}/hooks`, events: ["campaign.created"] },
  });
  const webhook = registered.data!.data;
  assert.match(webhook.secret, /^whsec_/);
  const campaign = (await api.POST("/v1/campaigns", { body: checkout })).data!.data;

  const { headers, body } = await firstDelivery;
  const timestamp = String(headers["webhook-timestamp"]);
  const signature = String(headers["webhook-signature"]);
  assert.match(String(headers["webhook-id"]), /^msg_[0-9a-f]{32}$/);
  assert.ok(verifyWebhookSignature(webhook.secret, timestamp, body, signature), "a genuine delivery fails verification");

  const event = JSON.parse(body.toString("utf8")) as components["schemas"]["CampaignCreatedEvent"];
  assert.equal(event.type, "campaign.created");
  assert.deepEqual(event.data, campaign);

  const tampered = Buffer.from(body.toString("utf8").replace('"Checkout"', '"Checkouts"'));
  assert.notDeepEqual(tampered, body);
  assert.ok(!verifyWebhookSignature(webhook.secret, timestamp, tampered, signature), "a tampered body verifies");
  assert.ok(!verifyWebhookSignature(webhook.secret, String(Number(timestamp) + 1), body, signature), "another timestamp verifies");
  assert.ok(!verifyWebhookSignature(`${webhook.secret}x`, timestamp, body, signature), "another secret verifies");

  const attempt = await eventually(async () => {
    const { data } = await api.GET("/_sandbox/deliveries");
    return data?.data.items.find((d) => d.webhookId === webhook.id);
  });
  assert.equal(attempt.statusCode, 204);
  assert.equal(attempt.eventType, "campaign.created");
  // Every delivery record has its fault, null when none touched it: the
  // generated type says so, or this does not type-check.
  const fault: components["schemas"]["Fault"] | null = attempt.fault;
  assert.equal(fault, null);
});
