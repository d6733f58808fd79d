// A test an SDK team writes against the installed package, as its README
// shows: a stubbed answer for its decoder, the journal, a verified webhook
// delivery and the verdict on its client, all through the package's exports.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { after, before, test } from "node:test";
import { Receiver, assertClientRulesHeld, on, sandboxControls, stub, type components } from "@testcampaign/sandbox";

const binary = process.env.SANDBOX_BINARY;
assert.ok(binary, "SANDBOX_BINARY names the sandbox to start");
const sandbox = spawn(binary, ["-addr", "127.0.0.1:0", "-webhook-loopback-only", "-frozen-clock", "2026-01-01T00:00:00Z"], {
  stdio: ["ignore", "pipe", "inherit"],
});
let baseUrl = "";
before(async () => {
  // Its one line on stdout is its base URL.
  baseUrl = await new Promise<string>((resolve, reject) => {
    createInterface({ input: sandbox.stdout! }).once("line", resolve);
    sandbox.once("exit", (code) => reject(new Error(`the sandbox exited (${code}) before it listened`)));
  });
});
after(() => {
  sandbox.kill();
});

test("a stubbed 200 reaches the client marked and journalled, a delivery verifies, and the client held its rules", async () => {
  const key = "svc_test_package_user_0001";
  const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
  const controls = sandboxControls(baseUrl, key);
  const body = JSON.stringify({ success: true, data: { items: [{ id: "cmp_000001", status: "archived_later" }], hasMore: false, nextCursor: null } });
  await controls.planFault(on(stub(200, body), "GET", "/v1/campaigns"));

  const stubbed = await fetch(`${baseUrl}/v1/campaigns`, { headers });
  assert.equal(stubbed.status, 200);
  assert.equal(await stubbed.text(), body);
  assert.match(stubbed.headers.get("X-Sandbox-Fault") ?? "", /^flt_/);
  const [entry]: components["schemas"]["LoggedRequest"][] = await controls.requests({ method: "GET", path: "/v1/campaigns" });
  assert.equal(entry?.status, 200);
  assert.equal(entry?.carriedOut, false);

  const receiver = await Receiver.start();
  try {
    const registered = await fetch(`${baseUrl}/v1/webhooks`, {
      method: "POST",
      headers,
      body: JSON.stringify({ url: receiver.url, events: ["campaign.created"] }),
    });
    receiver.setSecret(((await registered.json()) as { data: { secret: string } }).data.secret);
    const created = await fetch(`${baseUrl}/v1/campaigns`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name: "Checkout", platform: "ios", testersRequired: 10, rewardPerBug: 19.99 }),
    });
    assert.equal(created.status, 200);
    const [delivery] = await receiver.next(1);
    assert.equal(delivery?.verdict, "ok");
  } finally {
    await receiver.close();
  }
  await assertClientRulesHeld(baseUrl, key);
});
