/** Drives a server with `wrk` and reads its figures back through a Lua `done` hook. */

export interface WrkRequest {
  method: "GET" | "POST";
  path: string;
  body?: string;
}

export interface WrkOptions {
  url: string;
  /** Sent in turn, round robin, by every connection. */
  requests: WrkRequest[];
  headers: Record<string, string>;
  connections: number;
  threads: number;
  seconds: number;
}

export interface WrkResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Answers with status 400 or more (wrk's count; the service sends no 3xx). */
  non2xx: number;
  socketErrors: number;
}

export const WRK_MISSING = "wrk is not installed. On Debian or Ubuntu: apt-get update && " +
  "apt-get install -y wrk (macOS: brew install wrk)";

/** Whether `wrk` can be run here. */
export async function hasWrk(): Promise<boolean> {
  try {
    const out = await new Deno.Command("wrk", {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    })
      .output();
    return out.code === 0 || out.code === 1; // wrk --version exits 1 after printing
  } catch {
    return false;
  }
}

const lua = (s: string) => JSON.stringify(s); // JSON string escapes are valid Lua escapes here

function script({ requests, headers }: Pick<WrkOptions, "requests" | "headers">): string {
  const headerTable = Object.entries(headers).map(([k, v]) => `[${lua(k)}] = ${lua(v)}`).join(
    ", ",
  );
  const rows = requests.map((r) =>
    `{ ${lua(r.method)}, ${lua(r.path)}, ${r.body === undefined ? "nil" : lua(r.body)} }`
  ).join(",\n");
  return `
local requests = {
${rows}
}
local headers = { ${headerTable} }
local i = 0
function init(args)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
  i = math.random(#requests)
end
function request()
  i = i % #requests + 1
  local r = requests[i]
  return wrk.format(r[1], r[2], headers, r[3])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"socket":%d,"status":%d,"p50_us":%d,"p99_us":%d,"max_us":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(99), latency.max))
end
`;
}

/** Runs wrk once and returns its figures. */
export async function runWrk(options: WrkOptions): Promise<WrkResult> {
  const file = await Deno.makeTempFile({ prefix: "bench-", suffix: ".lua" });
  try {
    await Deno.writeTextFile(file, script(options));
    const out = await new Deno.Command("wrk", {
      args: [
        `-t${options.threads}`,
        `-c${options.connections}`,
        `-d${options.seconds}s`,
        "--timeout",
        "10s",
        "-s",
        file,
        options.url,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    const line = text.split("\n").find((l) => l.startsWith("WRK_JSON "));
    if (!out.success || !line) {
      throw new Error(`wrk failed: ${text}${new TextDecoder().decode(out.stderr)}`);
    }
    const r = JSON.parse(line.slice("WRK_JSON ".length));
    const seconds = r.duration_us / 1e6;
    return {
      requests: r.requests,
      seconds,
      rps: r.requests / seconds,
      p50Ms: r.p50_us / 1000,
      p99Ms: r.p99_us / 1000,
      maxMs: r.max_us / 1000,
      non2xx: r.status,
      socketErrors: r.socket,
    };
  } finally {
    await Deno.remove(file);
  }
}
