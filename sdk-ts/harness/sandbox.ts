// Builds the sandbox once and runs it as a child process on a free
// loopback port, as the README tells harnesses to.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const sdkDir = dirname(dirname(fileURLToPath(import.meta.url)));
const repoDir = dirname(sdkDir);

/** Where `npm test` puts the sandbox binary and the generated types (git ignores it). */
export const buildDir = join(sdkDir, "build");
/** The sandbox binary `buildSandbox` writes and `startSandbox` runs. */
export const sandboxBinary = join(buildDir, "sandbox");
/** The server secret every started sandbox gets, so webhook secrets are stable across runs. */
export const serverSecret = "sdk-ts-test-server-secret-0123456789";

/** Compiles `./cmd/sandbox` into `sandboxBinary`; Go's cache makes a rebuild quick. */
export function buildSandbox(): void {
  mkdirSync(buildDir, { recursive: true });
  execFileSync("go", ["build", "-o", sandboxBinary, "./cmd/sandbox"], { cwd: repoDir, stdio: "inherit" });
}

/** A running sandbox: its base URL, and how to stop it. */
export interface Sandbox {
  baseUrl: string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
// A test file that dies before its after() hook still leaves no sandbox behind.
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/**
 * Starts the built sandbox on 127.0.0.1:0 with `flags` added, and resolves
 * once it has printed its base URL, the one line it writes to stdout.
 */
export async function startSandbox(flags: string[] = []): Promise<Sandbox> {
  const child = spawn(
    sandboxBinary,
    ["-addr", "127.0.0.1:0", "-webhook-loopback-only", "-secret", serverSecret, ...flags],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  running.add(child);
  const stderr: string[] = [];
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => stderr.push(chunk));
  const exited = once(child, "exit");
  const lines = createInterface({ input: child.stdout! });
  const firstLine = new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    exited.then(([code]) => reject(new Error(`sandbox exited (${code}) before listening:\n${stderr.join("")}`)));
  });
  let baseUrl: string;
  try {
    baseUrl = await firstLine;
  } catch (err) {
    running.delete(child);
    throw err;
  }
  return {
    baseUrl,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
      running.delete(child);
    },
  };
}

/** A fresh test key: its own account, so tests never see each other's data. */
export function freshKey(): string {
  return `svc_test_${randomBytes(12).toString("hex")}`;
}
