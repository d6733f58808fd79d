// Builds the sandbox once and runs it, and what else the tests put in
// front of it, as child processes on free loopback ports, as docs/sdks.md
// tells harnesses to.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** The sdk-ts directory. */
export const sdkDir = dirname(dirname(fileURLToPath(import.meta.url)));
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

/** A server running as a child process: its base URL, and how to stop it. */
export interface Server {
  baseUrl: string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
// A test file that dies before its after() hook still leaves no server behind.
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/**
 * Runs `command` and resolves with the base URL `baseUrlIn` finds in a line
 * of its stdout, which is drained for as long as it runs; stopping it sends
 * SIGTERM and waits for the exit.
 */
export async function startServer(
  command: string,
  args: string[],
  baseUrlIn: (line: string) => string | undefined,
): Promise<Server> {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  const stderr: string[] = [];
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => stderr.push(chunk));
  const exited = once(child, "exit");
  const lines = createInterface({ input: child.stdout! });
  const listening = new Promise<string>((resolve, reject) => {
    lines.on("line", (line) => {
      const baseUrl = baseUrlIn(line);
      if (baseUrl !== undefined) resolve(baseUrl);
    });
    exited.then(([code]) => reject(new Error(`${command} exited (${code}) before listening:\n${stderr.join("")}`)));
  });
  let baseUrl: string;
  try {
    baseUrl = await listening;
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

/**
 * Starts the built sandbox on 127.0.0.1:0 with `flags` added, and resolves
 * once it has printed its base URL, the one line it writes to stdout.
 */
export function startSandbox(flags: string[] = []): Promise<Server> {
  return startServer(
    sandboxBinary,
    ["-addr", "127.0.0.1:0", "-webhook-loopback-only", "-secret", serverSecret, ...flags],
    (line) => line,
  );
}

/** A fresh test key: its own account, so tests never see each other's data. */
export function freshKey(): string {
  return `svc_test_${randomBytes(12).toString("hex")}`;
}
