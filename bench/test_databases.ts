/**
 * `deno task bench:test-databases [--apps 20]`: what a test's database costs the test tier, with
 * the databases reused (`server/testing/reused_databases.ts`) and made anew for each app. Each
 * round starts an app (`startTestApp`), creates a project and a probe through the REST interface
 * and closes the app; it prints, per app, this process's CPU and, on PostgreSQL (with
 * `TEST_DATABASE_URL`, a server on this machine), the server's CPU from `/proc`: every `postgres`
 * process's, and what the postmaster reaped of those that ended.
 *
 * @module
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { backends, startTestApp, TestClient } from "../server/testing/app.ts";
import { cpuSecondsOf } from "../server/testing/process.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { apps: { type: "string", default: "20" } },
});
const APPS = Number(values.apps);

/**
 * CPU seconds of this machine's PostgreSQL, or null where none can be read: every `postgres`
 * process's, with the ended backends the postmaster reaped.
 */
async function postgresCpu(): Promise<number | null> {
  let seconds = 0;
  let found = false;
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      if ((await Deno.readTextFile(`/proc/${entry.name}/comm`)).trim() !== "postgres") continue;
      seconds += await cpuSecondsOf(Number(entry.name), { reaped: true });
      found = true;
    } catch {
      // It ended meanwhile.
    }
  }
  return found ? seconds : null;
}

async function oneApp(backend: "pglite" | "postgres", reuse: boolean, round: number) {
  const app = await startTestApp(backend, { reuse });
  const api = new TestClient(app.handler);
  const project = `bench-${round}`;
  if ((await api.post("/api/v1/projects", { project })).status !== 201) {
    throw new Error("could not create a project");
  }
  const probe = await api.post(`/api/v1/projects/${project}/probes`, { url: "https://a.test/" });
  if (probe.status !== 201) throw new Error(`could not create a probe: ${probe.text}`);
  await app.close();
}

console.log(`bench:test-databases  ${APPS} apps each  (CPU per app: this process; PostgreSQL's)`);
for (const backend of backends()) {
  for (const reuse of [false, true]) {
    await oneApp(backend, reuse, -1); // the first: module loading, the template or dump
    const pgBefore = await postgresCpu();
    const before = process.cpuUsage();
    const started = performance.now();
    for (let round = 0; round < APPS; round++) await oneApp(backend, reuse, round);
    const used = process.cpuUsage(before);
    const pgAfter = await postgresCpu();
    const ms = (seconds: number) => `${(seconds * 1000 / APPS).toFixed(0).padStart(4)} ms`;
    const server = backend === "postgres" && pgBefore !== null && pgAfter !== null
      ? ms(pgAfter - pgBefore)
      : "   -   ";
    console.log(
      `${backend.padEnd(8)} ${reuse ? "reused" : "anew  "}  CPU ${
        ms((used.user + used.system) / 1e6)
      }  PostgreSQL ${server}  wall ${ms((performance.now() - started) / 1000)}`,
    );
  }
}
// A kept embedded database keeps the process running; kept PostgreSQL ones go at unload.
Deno.exit(0);
