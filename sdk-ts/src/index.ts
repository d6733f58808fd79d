// @testcampaign/sandbox: what a TypeScript SDK's tests need from the
// sandbox beside its API. The controls client, a verifying webhook receiver,
// the verdict on the client, and fault constructors.
export { ControlError, Receiver, sandboxControls, type ReceivedDelivery } from "./sandbox.ts";
export { verifyDelivery, verifyWebhookSignature, type DeliveryVerdict } from "./webhook.ts";
export { assertClientRulesHeld, brokenRules, fetchVerdict, type RuleVerdict, type Verdict, type VerdictWindow } from "./verdict.ts";
export { delayFault, lostAnswer, networkFault, on, retryAfter, statusFault, stub, type Fault } from "./faults.ts";
/** The types openapi-typescript generates from the sandbox's OpenAPI document. */
export type { components, paths } from "../build/api.d.ts";
