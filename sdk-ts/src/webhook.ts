// The receiving side of the sandbox's webhooks, as docs/webhooks.md states
// the signature scheme.
import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Whether `signature` (the `Webhook-Signature` header) is `v1=` and the hex
 * HMAC-SHA256 of `<Webhook-Timestamp>.<raw body>`, keyed with the webhook's
 * whole secret (`whsec_…`). The body must be the bytes received, not JSON
 * parsed and serialised again.
 */
export function verifyWebhookSignature(secret: string, timestamp: string, rawBody: Buffer, signature: string): boolean {
  const mac = createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody);
  const expected = Buffer.from(`v1=${mac.digest("hex")}`);
  const received = Buffer.from(signature);
  return received.length === expected.length && timingSafeEqual(received, expected);
}

/** What `verifyDelivery` makes of a delivery. */
export type DeliveryVerdict = "ok" | "badSignature" | "staleTimestamp";

/**
 * Checks a delivery as a receiver must: its signature (see
 * `verifyWebhookSignature`), and its `Webhook-Timestamp` within
 * `toleranceSeconds` (300 when absent) of `now`, in Unix seconds. Under
 * test, `now` is the delivery's `X-Sandbox-Now`, the account's clock, which
 * a frozen clock keeps far from the receiver's own.
 */
export function verifyDelivery(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  rawBody: Buffer,
  { now, toleranceSeconds = 300 }: { now: number; toleranceSeconds?: number },
): DeliveryVerdict {
  const header = (name: string): string => {
    const value = headers[name];
    return Array.isArray(value) ? (value[0] ?? "") : (value ?? "");
  };
  const timestamp = header("webhook-timestamp");
  if (!verifyWebhookSignature(secret, timestamp, rawBody, header("webhook-signature"))) {
    return "badSignature";
  }
  const stamped = Number(timestamp);
  return Number.isInteger(stamped) && Math.abs(now - stamped) <= toleranceSeconds ? "ok" : "staleTimestamp";
}
