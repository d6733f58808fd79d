// The pretest step: builds the sandbox, starts it, and writes the types
// openapi-typescript generates from the document it serves, so the tests
// and `tsc --noEmit` see exactly what an SDK team would generate today.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import { buildDir, buildSandbox, startSandbox } from "./sandbox.ts";

buildSandbox();
const sandbox = await startSandbox();
try {
  const ast = await openapiTS(new URL("/openapi.json", sandbox.baseUrl));
  writeFileSync(join(buildDir, "api.d.ts"), astToString(ast));
} finally {
  await sandbox.stop();
}
