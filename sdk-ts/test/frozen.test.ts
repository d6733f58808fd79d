// A receiver under a frozen clock: it checks Webhook-Timestamp against the
// account's time, X-Sandbox-Now, and reads the attempt it answered at once.
import assert from "node:assert/strict";
import { once as onceEvent } from "node:events";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import type { components } from "../build/api.d.ts";
import { verifyDelivery } from "../src/webhook.ts";
import { checkout, newAccount, useSandbox } from "./support.ts";

const baseUrl = useSandbox(["-frozen-clock", "2026-01-01T00:00:00Z"]);

test("a delivery under a frozen clock verifies against X-Sandbox-Now, and its record is read at once", async (t) => {
  let delivered: (delivery: { headers: IncomingHttpHeaders; body: Buffer }) => void;
  const firstDelivery = new Promise<{ headers: IncomingHttpHeaders; body: Buffer }>((resolve) => (delivered = resolve));
  const receiver = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    // Answered, and only then handed to the test.
    res.writeHead(204).end(() => delivered({ headers: req.headers, body: Buffer.concat(chunks) }));
  });
  receiver.listen(0, "127.0.0.1");
  await onceEvent(receiver, "listening");
  t.after(() => {
    receiver.closeAllConnections();
    receiver.close();
  });
  const { port } = receiver.address() as AddressInfo;
  const { api } = newAccount(baseUrl());
  const webhook = (await api.POST("/v1/webhooks", { body: { url: `http://127.0.0.1:${port}/hooks`, events: ["campaign.created"] } })).data!.data;
  await api.POST("/v1/campaigns", { body: checkout });

  const { headers, body } = await firstDelivery;
  const now = Number(headers["x-sandbox-now"]);
  assert.equal(now, Date.UTC(2026, 0, 1) / 1000);
  assert.equal(verifyDelivery(webhook.secret, headers, body, { now }), "ok");
  assert.equal(verifyDelivery(webhook.secret, headers, body, { now: Date.now() / 1000 }), "staleTimestamp");
  assert.equal(verifyDelivery(`${webhook.secret}x`, headers, body, { now }), "badSignature");

  // No settle and no polling: the receiver has answered, so the record is there.
  const { data } = await api.GET("/_sandbox/deliveries");
  assert.equal(data!.data.items[0]?.webhookId, webhook.id);
  assert.equal(data!.data.items[0]?.statusCode, 204);
});

test("the generated types catch a fault's status as a string, and type the journal's headers as lists", () => {
  const fault: components["schemas"]["FaultPlanCreate"] = {
    // @ts-expect-error: status is an integer, so a string is a type error
    status: "503",
  };
  assert.equal(fault.status, "503");
  const entry = { headers: { "User-Agent": ["sdk/1"] } } as Pick<components["schemas"]["LoggedRequest"], "headers">;
  const userAgent: string | undefined = entry.headers["User-Agent"]?.[0];
  assert.equal(userAgent, "sdk/1");
});
