// What the package exports beside the controls sandbox.test.ts shows: the
// fault constructors, a stubbed answer in either phase, the plan as listed,
// and the clock, through src/index.ts as a user imports them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { delayFault, lostAnswer, networkFault, on, retryAfter, sandboxControls, statusFault, stub } from "../src/index.ts";
import { checkout, newAccount, useSandbox } from "./support.ts";

const baseUrl = useSandbox(["-frozen-clock", "2026-01-01T00:00:00Z"]);

test("the fault constructors plan what Go's sandboxtest ones do", () => {
  assert.deepEqual(on(retryAfter(statusFault(503), 2), "GET", "/v1/campaigns"), { status: 503, retryAfter: 2, method: "GET", path: "/v1/campaigns" });
  assert.deepEqual(lostAnswer(), { network: "reset", phase: "after" });
  assert.deepEqual(networkFault("trickle"), { network: "trickle" });
  assert.deepEqual(delayFault(1500), { delayMs: 1500 });
  assert.deepEqual(stub(204), { status: 204 });
  assert.deepEqual(stub(307, "", { Location: "/v1/testers" }), { status: 307, headers: { Location: "/v1/testers" } });
});

for (const phase of ["before", "after"] as const) {
  test(`a stubbed 201 with an unknown status answers in the API's place, phase ${phase}`, async () => {
    const { key } = newAccount(baseUrl());
    const controls = sandboxControls(baseUrl(), key);
    const body = JSON.stringify({ success: true, data: { id: "cmp_000777", status: "archived_later", region: "eu" } });
    await controls.planFault({ ...on(stub(201, body, { "X-Request-Id": "req_stub" }), "POST", "/v1/campaigns"), phase });

    const response = await fetch(`${baseUrl()}/v1/campaigns`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify(checkout),
    });
    assert.equal(response.status, 201);
    assert.equal(await response.text(), body);
    assert.equal(response.headers.get("X-Request-Id"), "req_stub");
    assert.match(response.headers.get("X-Sandbox-Fault") ?? "", /^flt_/);
    const [entry] = await controls.requests({ method: "POST", path: "/v1/campaigns" });
    assert.equal(entry?.status, 201);
    assert.equal(entry?.carriedOut, phase === "after");
    assert.equal(entry?.apiStatus, phase === "after" ? 200 : undefined);
  });
}

test("the plan lists what is still planned, and the clock reads the account's time", async () => {
  const { key } = newAccount(baseUrl());
  const controls = sandboxControls(baseUrl(), key);
  const planned = await controls.planFault({ ...statusFault(500), count: 2 });
  const [listed] = await controls.faults();
  assert.equal(listed?.id, planned.id);
  assert.equal(listed?.count, 2);
  assert.deepEqual(await controls.clock(), { now: "2026-01-01T00:00:00.000Z", frozen: true });
});
