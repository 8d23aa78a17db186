/**
 * Test support for the CLI: runs the program in-process against an app's request handler (no
 * socket), with the write key unless the environment says otherwise, files kept in a map, and
 * every request it made recorded.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { App } from "../server/app.ts";
import { BASE, TEST_API_KEY } from "../server/testing/app.ts";
import { runCli } from "./program.ts";

/** What one run of the CLI did. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** The requests it made, as `METHOD /path`. */
  calls: string[];
  /** Their URLs in full. */
  urls: string[];
  /** Standard output parsed as JSON (`--json`). */
  // deno-lint-ignore no-explicit-any
  json: () => any;
}

export interface CliOptions {
  /** Added to the environment (`PROBE_SERVICE_URL` and `SERVICE_API_KEY` are set already). */
  env?: Record<string, string>;
  /** The files the CLI may read, and where those it writes go, by path. */
  files?: Map<string, string> | Record<string, string>;
}

/** Runs the CLI with `args` against `app`: with no app, any request fails as unreachable. */
export async function runCliOn(
  app: Pick<App, "handler"> | null,
  args: string[],
  { env = {}, files = new Map() }: CliOptions = {},
): Promise<CliRun> {
  const kept = files instanceof Map ? files : new Map(Object.entries(files));
  let stdout = "";
  let stderr = "";
  const calls: string[] = [];
  const urls: string[] = [];
  const code = await runCli(args, {
    env: { PROBE_SERVICE_URL: BASE, SERVICE_API_KEY: TEST_API_KEY, ...env },
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    readTextFile: (path) => {
      const text = kept.get(path);
      return text === undefined
        ? Promise.reject(new Deno.errors.NotFound(`no file ${path}`))
        : Promise.resolve(text);
    },
    writeTextFile: (path, text) => {
      kept.set(path, text);
      return Promise.resolve();
    },
    fetch: (input, init) => {
      const request = new Request(input, init);
      calls.push(`${request.method} ${new URL(request.url).pathname}`);
      urls.push(request.url);
      return app ? app.handler(request) : Promise.reject(new Error("no network in this test"));
    },
  });
  return { code, stdout, stderr, calls, urls, json: () => JSON.parse(stdout) };
}

/** Asserts the run's exit status, showing its output when it differs; answers the run. */
export function expectExit(run: CliRun, code: number): CliRun {
  assert.equal(run.code, code, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  return run;
}
