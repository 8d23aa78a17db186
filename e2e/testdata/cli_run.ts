/**
 * The CLI as operators run it, for the CLI's end-to-end files: `deno run cli/main.ts …` as a
 * subprocess.
 *
 * @module
 */
import assert from "node:assert/strict";

const MAIN = new URL("../../cli/main.ts", import.meta.url).pathname;

/** One run of the CLI: its exit code and output. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
  // deno-lint-ignore no-explicit-any
  json: () => any;
}

/** Runs `deno run cli/main.ts …` with the permissions of `deno task cli`. */
export async function cli(
  args: string[],
  env: Record<string, string>,
  stdin?: string,
): Promise<Run> {
  const child = new Deno.Command(Deno.execPath(), {
    // The permissions of `deno task cli`.
    args: ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", MAIN, ...args],
    env: { NO_COLOR: "1", ...env },
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const output = await child.output();
  const stdout = new TextDecoder().decode(output.stdout);
  return {
    code: output.code,
    stdout,
    stderr: new TextDecoder().decode(output.stderr),
    json: () => JSON.parse(stdout),
  };
}

/** Fails, with the output, unless the run exited with `code`. */
export function expect(run: Run, code: number): Run {
  assert.equal(run.code, code, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  return run;
}
