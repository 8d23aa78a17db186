/** `deno task cli`: the operator's command line (see cli/program.ts and `--help`). */
import { runCli } from "./program.ts";

const encoder = new TextEncoder();

function writeAll(stream: typeof Deno.stdout, text: string): void {
  let bytes = encoder.encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(stream.writeSync(bytes));
}

if (import.meta.main) {
  const code = await runCli(Deno.args, {
    env: Deno.env.toObject(),
    stdout: (text) => writeAll(Deno.stdout, text),
    stderr: (text) => writeAll(Deno.stderr, text),
    readTextFile: (path) =>
      path === "-" ? new Response(Deno.stdin.readable).text() : Deno.readTextFile(path),
  });
  Deno.exit(code);
}
