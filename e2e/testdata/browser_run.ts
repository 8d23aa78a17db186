/**
 * What the browser tests share: the environment a fresh clone's server starts with, and a
 * browser script (`e2e/testdata/*_browser.ts`) run as a subprocess, its questions answered and
 * its report read.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createPostgresDatabase } from "../../server/testing/app.ts";
import {
  isListeningLine,
  type ServerProcess,
  startServerProcess,
} from "../../server/testing/process.ts";

/** The environment a fresh clone would have (its PATH and Deno's cache), plus `vars`. */
export function cleanEnv(vars: Record<string, string>): Record<string, string> {
  const keep = ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"];
  const base = Object.fromEntries(
    keep.flatMap((k) => Deno.env.get(k) !== undefined ? [[k, Deno.env.get(k)!]] : []),
  );
  return { ...base, ...vars };
}

/**
 * Runs `script` with `args` (as JSON, after `mode` when given) and answers its report, the
 * `{"report": …}` line on its stdout. Its questions (`{"ask": …}` lines) go to `answer`, and
 * its stdin gets `ok` when that has been done. Killed after `deadlineMs`.
 */
export async function runBrowserScript<R>(
  script: URL,
  args: unknown,
  { mode, answer = () => Promise.resolve(), deadlineMs = 240_000 }: {
    mode?: string;
    answer?: (question: Record<string, unknown>) => Promise<void>;
    deadlineMs?: number;
  } = {},
): Promise<R> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      "--config",
      new URL("../../deno.dev.json", import.meta.url).pathname,
      script.pathname,
      ...(mode === undefined ? [] : [mode]),
      JSON.stringify(args),
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const deadline = setTimeout(() => child.kill("SIGKILL"), deadlineMs);
  const stderr = new Response(child.stderr).text();
  const stdin = child.stdin.getWriter();
  let report: R | undefined;
  let buffer = "";
  try {
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      let end;
      while ((end = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        if (!line.startsWith("{")) continue;
        const message = JSON.parse(line);
        if (message.ask) {
          await answer(message.ask);
          await stdin.write(new TextEncoder().encode("ok\n"));
        } else if (message.report) report = message.report;
      }
    }
  } finally {
    clearTimeout(deadline);
    await stdin.close().catch(() => {});
  }
  const status = await child.status;
  const log = await stderr;
  assert.ok(status.success && report, `the browser run failed (${status.code}):\n${log}`);
  return report;
}

/**
 * Where a walkthrough keeps its things: a folder for screenshots (`DASHBOARD_SCREENSHOT_DIR`, or
 * a new one; none without `screenshots`), the service's `DATA_DIR`, and a PostgreSQL database of its own when
 * TEST_DATABASE_URL is set (else the service's embedded one).
 */
export async function walkthroughPlaces(prefix: string, { screenshots = true } = {}) {
  const shotDir = !screenshots ? "" : Deno.env.get("DASHBOARD_SCREENSHOT_DIR") ??
    await Deno.makeTempDir({ prefix: `${prefix}-screenshots-` });
  if (shotDir) await Deno.mkdir(shotDir, { recursive: true });
  const dataDir = await Deno.makeTempDir({ prefix: `${prefix}-e2e-` });
  const adminUrl = Deno.env.get("TEST_DATABASE_URL");
  const database = adminUrl ? await createPostgresDatabase(adminUrl) : null;
  return {
    shotDir,
    /** Starts the service as a fresh clone's `deno task start`, loopback open, with `vars`. */
    start: (vars: Record<string, string>): Promise<ServerProcess> =>
      startServerProcess({
        env: cleanEnv({
          DATA_DIR: dataDir,
          ...(database && { DATABASE_URL: database.url }),
          // The test's targets and receivers are on loopback, which is reached only when opened.
          PROBE_ALLOW_NETWORKS: "127.0.0.0/8",
          ...vars,
        }),
        clearEnv: true,
        output: "capture",
        readyLine: isListeningLine,
      }),
    /** Stops `server` (it must end cleanly) and removes the data and the database. */
    async end(server: ServerProcess | undefined): Promise<void> {
      const stopped = await server?.stop();
      await database?.drop();
      await Deno.remove(dataDir, { recursive: true });
      if (server && stopped) assert.equal(stopped.code, 0, server.output());
    },
  };
}
