// The sandbox's verdict on a client, for a TypeScript suite run with
// node --test: run the suite against the sandbox, then ask whether the SDK
// held the client rules of docs/contract.md (CLI), and fail with the broken
// ones listed when it did not.
import { AssertionError } from "node:assert";
import type { components } from "../build/api.d.ts";

/** The verdict, as GET /_sandbox/verdict answers it. */
export type Verdict = components["schemas"]["Verdict"];

/** One rule's outcome in a verdict. */
export type RuleVerdict = components["schemas"]["ClientRuleVerdict"];

/**
 * Limits a verdict to part of the account's history: the requests after
 * `after` (the `lastRequest` of an earlier verdict), or since `since`, a time
 * on the account's clock. Give at most one.
 */
export interface VerdictWindow {
  after?: number;
  since?: string;
}

/** Asks the sandbox at `baseUrl` for the verdict on the client that used `key`. */
export async function fetchVerdict(baseUrl: string, key: string, window: VerdictWindow = {}): Promise<Verdict> {
  const url = new URL("/_sandbox/verdict", baseUrl);
  if (window.after !== undefined) url.searchParams.set("after", String(window.after));
  if (window.since !== undefined) url.searchParams.set("since", window.since);
  const res = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
  const text = await res.text();
  let body: { success?: boolean; data?: Verdict; error?: { code: string; message: string } };
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`GET /_sandbox/verdict answered ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  if (!res.ok || !body.success || !body.data) {
    throw new Error(`GET /_sandbox/verdict answered ${res.status}: ${body.error?.code ?? "no error envelope"} ${body.error?.message ?? ""}`.trim());
  }
  return body.data;
}

/** The rules a verdict says the client broke, a rule and its breaks a few lines each; empty when none. */
export function brokenRules(verdict: Verdict): string {
  const lines: string[] = [];
  for (const rule of verdict.rules) {
    if (rule.outcome !== "broken") continue;
    lines.push(`${rule.id} (${rule.level}), broken ${rule.brokenTimes} of ${rule.judged} times: ${rule.rule}`);
    for (const b of rule.breaks) lines.push(`  - ${b.why}`);
    const hidden = rule.brokenTimes - rule.breaks.length;
    if (hidden > 0) lines.push(`  - and ${hidden} more`);
  }
  return lines.join("\n");
}

/**
 * Asks for the verdict and throws an AssertionError listing the broken
 * rules, if the client broke any, so that a node --test test fails with
 * them: `await assertClientRulesHeld(baseUrl, key)` at the end of a test.
 */
export async function assertClientRulesHeld(baseUrl: string, key: string, window: VerdictWindow = {}): Promise<Verdict> {
  const verdict = await fetchVerdict(baseUrl, key, window);
  if (!verdict.held) {
    throw new AssertionError({
      message: `the client broke client rules of docs/contract.md:\n${brokenRules(verdict)}`,
      actual: verdict.rules.filter((r) => r.outcome === "broken").map((r) => r.id),
      expected: [],
      operator: "assertClientRulesHeld",
    });
  }
  return verdict;
}
