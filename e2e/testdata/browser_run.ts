/**
 * What the browser tests share: the environment a fresh clone's server starts with, and a
 * browser script (`e2e/testdata/*_browser.ts`) run as a subprocess, its questions answered and
 * its report read.
 *
 * @module
 */
import assert from "node:assert/strict";

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
