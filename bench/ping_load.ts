/**
 * The load generator of `deno task bench:pings`, in a process of its own so that it does not
 * share the service's thread: `CONNECTIONS` keep-alive HTTP/1.1 connections to `ORIGIN`, each
 * sending `GET` pings one after the other (a closed loop) at the paths listed in the JSON file
 * `PATHS`, in turn, for `WARMUP_SECONDS` and then `SECONDS`. The requests are written and read
 * on raw sockets: a `fetch` loop would cost the generator more CPU than the service spends.
 * Every request sent is waited for, so that what was answered is known exactly. Prints one JSON
 * line: per phase, the requests sent, the answers by status, those left unanswered (the
 * connection closed), and the measured phase's latencies' p50, p99 and max. It prints `sending`
 * as it starts.
 */
const origin = new URL(Deno.env.get("ORIGIN")!);
const paths: string[] = JSON.parse(Deno.readTextFileSync(Deno.env.get("PATHS")!));
const connections = Number(Deno.env.get("CONNECTIONS") ?? "32");
const warmupMs = Number(Deno.env.get("WARMUP_SECONDS") ?? "3") * 1000;
const measureMs = Number(Deno.env.get("SECONDS") ?? "20") * 1000;

const encoder = new TextEncoder();
const requests = paths.map((path) =>
  encoder.encode(`GET ${path} HTTP/1.1\r\nhost: ${origin.host}\r\n\r\n`)
);

interface Phase {
  sent: number;
  statuses: Record<string, number>;
  unanswered: number;
}
const phases: Record<"warmup" | "measured", Phase> = {
  warmup: { sent: 0, statuses: {}, unanswered: 0 },
  measured: { sent: 0, statuses: {}, unanswered: 0 },
};
const latencies: number[] = [];

const HEADER_END = encoder.encode("\r\n\r\n");

function indexOf(buffer: Uint8Array, length: number, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= length; i++) {
    for (let j = 0; j < needle.length; j++) if (buffer[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** Reads one answer (status line, headers, a Content-Length body); null when the peer closed. */
async function readAnswer(conn: Deno.Conn, buffer: Uint8Array): Promise<number | null> {
  let length = 0;
  for (;;) {
    const n = await conn.read(buffer.subarray(length));
    if (n === null) return null;
    length += n;
    const end = indexOf(buffer, length, HEADER_END);
    if (end < 0) continue;
    const head = new TextDecoder().decode(buffer.subarray(0, end));
    const status = Number(head.slice(9, 12));
    const declared = head.match(/\r\ncontent-length:\s*(\d+)/i);
    if (!declared) throw new Error(`an answer without Content-Length:\n${head}`);
    const total = end + 4 + Number(declared[1]);
    while (length < total) {
      const more = await conn.read(buffer.subarray(length));
      if (more === null) return null;
      length += more;
    }
    return status;
  }
}

console.log("sending");
const started = performance.now();
const warmupEnd = started + warmupMs;
const measureEnd = warmupEnd + measureMs;

async function client(index: number): Promise<void> {
  const buffer = new Uint8Array(64 * 1024);
  let turn = index * Math.floor(requests.length / connections);
  let conn: Deno.Conn | null = null;
  for (;;) {
    const sentAt = performance.now();
    if (sentAt >= measureEnd) break;
    const phase = sentAt < warmupEnd ? phases.warmup : phases.measured;
    conn ??= await Deno.connect({ hostname: origin.hostname, port: Number(origin.port) });
    const request = requests[turn++ % requests.length];
    phase.sent++;
    let status: number | null;
    try {
      await conn.write(request);
      status = await readAnswer(conn, buffer);
    } catch {
      status = null;
    }
    if (status === null) {
      phase.unanswered++;
      conn.close();
      conn = null;
      continue;
    }
    phase.statuses[status] = (phase.statuses[status] ?? 0) + 1;
    if (phase === phases.measured) latencies.push(performance.now() - sentAt);
  }
  try {
    conn?.close();
  } catch { /* closed already */ }
}

await Promise.all(Array.from({ length: connections }, (_, i) => client(i)));
const sorted = latencies.sort((a, b) => a - b);
const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
console.log(JSON.stringify({
  phases,
  measuredSeconds: measureMs / 1000,
  p50: at(0.5),
  p99: at(0.99),
  max: sorted.at(-1),
}));
