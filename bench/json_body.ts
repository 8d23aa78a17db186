/**
 * `deno task bench:json`: what parsing a JSON request body costs, in microseconds per body, and
 * how much of it is the scan for repeated keys (`repeatedKey` in server/edge/body.ts), for a
 * typical probe definition and for bodies near the 1 MiB limit. "parseJson" is all of it
 * (`JSON.parse` with the number check, the nesting walk, the scan); "scan" the scan alone.
 *
 * Environment: BENCH_ROUNDS (5; the median round is printed).
 */
import { MAX_BODY_BYTES, parseJson, repeatedKey } from "../server/edge/body.ts";
import { envNumber } from "./setup.ts";

const ROUNDS = envNumber("BENCH_ROUNDS", 5);

const typical = JSON.stringify({
  url: "https://shop.example.com/health?deep=1",
  method: "POST",
  headers: { Authorization: "Bearer abcdef0123456789", Accept: "application/json" },
  body: { check: "deep", items: [1, 2, 3] },
  latency: 500,
  label: "Shop health",
  expect: { status: ["2xx"], json: [{ path: "/status", op: "eq", value: "ok" }] },
});

/** Many small objects (the scan's worst case per byte): `[{"id":…,"name":…,"tags":[…]}, …]`. */
function objects(): string {
  const items = [];
  let size = 0;
  for (let i = 0; size < MAX_BODY_BYTES - 200; i++) {
    const item = JSON.stringify({ id: i, name: `item ${i}`, ok: i % 2 === 0 });
    items.push(item);
    size += item.length + 1;
  }
  // Arrays hold 1000 items at most: split into rows.
  const rows = [];
  for (let i = 0; i < items.length; i += 1000) rows.push(`[${items.slice(i, i + 1000).join(",")}]`);
  return `{"url":"http://a.test/","body":[${rows.join(",")}]}`;
}

/** One long string: few keys, many bytes. */
const longString = JSON.stringify({
  url: "http://a.test/",
  body: "x".repeat(MAX_BODY_BYTES - 100),
});

const cases: [string, string, number][] = [
  ["typical probe body", typical, 20_000],
  ["1 MiB of small objects", objects(), 20],
  ["1 MiB string", longString, 50],
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function measure(fn: (text: string) => unknown, text: string, calls: number): number {
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = performance.now();
    for (let i = 0; i < calls; i++) fn(text);
    rounds.push(((performance.now() - start) * 1000) / calls);
  }
  return median(rounds);
}

console.log("body                        bytes  parseJson µs   scan µs  scan share");
for (const [name, text, calls] of cases) {
  const result = parseJson(text);
  if (!result.ok) throw new Error(`${name}: ${JSON.stringify(result.error.body)}`);
  measure(repeatedKey, text, Math.ceil(calls / 10)); // warm-up
  measure(parseJson, text, Math.ceil(calls / 10));
  const all = measure(parseJson, text, calls);
  const scan = measure(repeatedKey, text, calls);
  const share = `${((scan / all) * 100).toFixed(0)}%`;
  console.log(
    `${name.padEnd(24)} ${String(text.length).padStart(8)} ${all.toFixed(1).padStart(13)} ` +
      `${scan.toFixed(1).padStart(9)} ${share.padStart(11)}`,
  );
}
