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
