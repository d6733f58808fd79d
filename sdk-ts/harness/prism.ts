// Stoplight's Prism as a validating proxy in front of a sandbox, reading
// the document the sandbox serves: it forwards every request and adds an
// `sl-violations` header to each answer whose request or response breaks
// the document.
import { join } from "node:path";
import { sdkDir, startServer, type Server } from "./sandbox.ts";

const prismCli = join(sdkDir, "node_modules", ".bin", "prism");

/** Starts `prism proxy` on a free loopback port, in front of the sandbox at `sandboxUrl`. */
export function startPrismProxy(sandboxUrl: string): Promise<Server> {
  const document = new URL("/openapi.json", sandboxUrl).href;
  return startServer(
    prismCli,
    ["proxy", document, sandboxUrl, "--host", "127.0.0.1", "--port", "0", "--multiprocess=false", "--errors=false"],
    (line) => /Prism is listening on (http:\/\/\S+)/.exec(line)?.[1],
  );
}
