/**
 * Log bytes per request without a key (issue 18): drives the server with wrk on a 255-character
 * unknown path, on `/status/nope`, and on `/api/v1/projects` without a key, and counts what the
 * server writes to stdout meanwhile. Loopback only; the embedded database in a temporary folder.
 *
 *   deno task bench:log-flood                                          # this tree
 *   BENCH_ENTRY=/work/main/server/main.ts deno task bench:log-flood    # another tree's server
 *   BENCH_SECONDS=10 BENCH_CONNECTIONS=64                              # the defaults
 *
 * @module
 */
import { startServerProcess } from "../server/testing/process.ts";
import { BENCH_KEY, envNumber, loadNote, requireWrk } from "./setup.ts";
import { runWrk } from "./wrk.ts";

await requireWrk();
const seconds = envNumber("BENCH_SECONDS", 10);
const connections = envNumber("BENCH_CONNECTIONS", 64);
const entry = Deno.env.get("BENCH_ENTRY");
const dataDir = await Deno.makeTempDir({ prefix: "bench-log-" });

let bytes = 0;
let lines = 0;
const server = await startServerProcess({
  ...(entry && { entry, cwd: new URL("..", `file://${entry}`).pathname }),
  env: {
    NODE_ENV: "production",
    SERVICE_API_KEY: BENCH_KEY,
    DATA_DIR: dataDir,
    RUNNER: "off",
    LOG_LEVEL: "info",
  },
  onLine: (text) => {
    bytes += new TextEncoder().encode(text).length + 1;
    lines++;
  },
});

try {
  console.log(`${loadNote()}; ${seconds} s, ${connections} connections each`);
  console.log(`server: ${entry ?? "this tree"}`);
  for (const path of [`/${"x".repeat(254)}`, "/status/nope", "/api/v1/projects"]) {
    const [bytesBefore, linesBefore] = [bytes, lines];
    const result = await runWrk({
      url: server.url,
      requests: [{ method: "GET", path }],
      headers: {},
      connections,
      threads: 1,
      seconds,
    });
    // The lines of the last turn, and a window's summary, may still be on their way.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const logged = bytes - bytesBefore;
    const label = path.length > 40 ? `/${"x".repeat(8)}… (${path.length} chars)` : path;
    console.log(
      `${label}: ${result.requests} requests (${result.rps.toFixed(0)}/s), ` +
        `${(logged / 1024 / 1024).toFixed(2)} MiB of log in ${lines - linesBefore} lines, ` +
        `${(logged / result.requests).toFixed(2)} bytes per request`,
    );
  }
} finally {
  await server.stop();
  console.log(`at shutdown: ${bytes} bytes in ${lines} lines in all`);
  await Deno.remove(dataDir, { recursive: true });
}
