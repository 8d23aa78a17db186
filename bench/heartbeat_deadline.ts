/**
 * `deno task bench:heartbeat-deadline`: from a heartbeat's deadline to its notification. The
 * service (one instance on the embedded database; two on one PostgreSQL database) gets
 * `--heartbeats` heartbeats (10,000) and a webhook target on a loopback receiver. All but
 * `--missing` (200) have a period of an hour and stay quiet. The missing ones (period 10 s,
 * grace 0) are made and pinged once each, evenly over `--spread` seconds (20), on the instances
 * in turn, and then left silent: each one's deadline (its `next_deadline` as read after the ping)
 * passes at a known time. Prints, for their `probe.down` notifications, the time from the
 * deadline to the receiver (p50, p99, max; target p99 under 1 s). Then each is given a period of
 * an hour and pinged again, and its `probe.recovered` awaited. Every heartbeat must have had exactly one of each, and the quiet
 * ones none: with two instances both watch the deadlines.
 *
 *   deno task bench:heartbeat-deadline [--heartbeats 10000] [--missing 200] [--spread 20]
 *                                      [--instances 1|2] [--database embedded|postgres]
 *
 * On the embedded database by default; on PostgreSQL with `--database postgres` or when
 * `DATABASE_URL` is set (a database of the bench's own on that server, dropped afterwards), two
 * instances unless `--instances` says otherwise. Not a test: figures vary with the machine and
 * its load.
 */
import { parseArgs } from "node:util";
import { restCall, type ServerProcess } from "../server/testing/process.ts";
import { webhookReceiver } from "../server/testing/receivers.ts";
import { watchCpu } from "./cpu_shares.ts";
import {
  databaseChoice,
  KEY,
  type MadeHeartbeat,
  makeHeartbeat,
  makeHeartbeats,
  makeProject,
  nearest,
  startServices,
} from "./heartbeat_setup.ts";
import { speedNote } from "./setup.ts";

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    heartbeats: { type: "string", default: "10000" },
    missing: { type: "string", default: "200" },
    spread: { type: "string", default: "20" },
    instances: { type: "string" },
    database: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
if (args.help) {
  console.log(`deno task bench:heartbeat-deadline [--heartbeats 10000] [--missing 200]
                  [--spread 20] [--instances 1|2] [--database embedded|postgres]`);
  Deno.exit(0);
}
const database = databaseChoice(args.database);
const INSTANCES = Number(args.instances ?? (database.kind === "postgres" ? 2 : 1));
const HEARTBEATS = Number(args.heartbeats);
const MISSING = Number(args.missing);
const SPREAD_MS = Number(args.spread) * 1000;
const PERIOD_S = 10;
const PER_PROJECT = 500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Arrival {
  id: string;
  type: string;
  probeId: string;
  at: number;
}

/** The tests' webhook receiver; what arrived, read as events. */
function receiver() {
  const hook = webhookReceiver([204]);
  return {
    url: hook.url,
    arrivals: (): Arrival[] =>
      hook.received.map((call) => {
        const event = JSON.parse(call.body);
        return {
          id: call.headers.get("webhook-id") ?? "",
          type: event.type,
          probeId: event.data?.probe_id ?? "",
          at: call.at,
        };
      }),
    close: () => hook.close(),
  };
}

async function ping(url: string): Promise<void> {
  const res = await fetch(url);
  await res.body?.cancel();
  if (res.status !== 200) throw new Error(`ping ${url}: ${res.status}`);
}

/** The ping URL on another instance: the same path at its origin. */
const on = (server: ServerProcess, url: string) => server.url + new URL(url).pathname;

async function waitFor(what: string, done: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (!done()) {
    if (Date.now() > until) {
      console.log(`warning: gave up waiting for ${what} after ${ms / 1000} s`);
      return false;
    }
    await sleep(100);
  }
  return true;
}

const ms = (n: number) => `${Math.round(n)} ms`;
function spread(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `p50 ${ms(nearest(sorted, 0.5))}  p99 ${ms(nearest(sorted, 0.99))}  max ${
    ms(sorted.at(-1) ?? NaN)
  }  (n=${sorted.length})`;
}

console.log(await speedNote());
const services = await startServices(database, { instances: INSTANCES });
const hook = receiver();
try {
  const { servers } = services;
  const [first] = servers;
  console.log(
    `bench:heartbeat-deadline  heartbeats=${HEARTBEATS} missing=${MISSING} over ${
      SPREAD_MS / 1000
    } s (period ${PERIOD_S} s, grace 0)  instances=${INSTANCES}  database=${services.where}`,
  );
  for (
    const [path, body] of [
      ["/notification-targets", { name: "hook", kind: "webhook", url: hook.url }],
      ["/settings/alerts", { targets: ["hook"], failure_threshold: 1, success_threshold: 1 }],
    ] as const
  ) {
    const res = await restCall(
      first,
      KEY,
      path === "/settings/alerts" ? "PATCH" : "POST",
      path,
      body,
    );
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  const madeAt = performance.now();
  await makeHeartbeats(first, {
    count: HEARTBEATS - MISSING,
    perProject: PER_PROJECT,
    prefix: "quiet",
    body: () => ({ period_seconds: 3600, grace_seconds: 3600 }),
  });
  console.log(
    `${HEARTBEATS - MISSING} quiet heartbeats made in ${
      ((performance.now() - madeAt) / 1000).toFixed(0)
    } s`,
  );

  // The missing ones: made, pinged and read one at a time, evenly over the spread.
  const cpu = await watchCpu(
    servers.map((s, i) => ({ label: `service ${i + 1}`, pid: s.pid, threads: true })),
    services.postgres,
  );
  await makeProject(first, "missing");
  const deadlines = new Map<string, number>();
  const missing: MadeHeartbeat[] = [];
  const started = Date.now();
  for (let i = 0; i < MISSING; i++) {
    await sleep(Math.max(0, started + (i * SPREAD_MS) / MISSING - Date.now()));
    const server = servers[i % servers.length];
    const made = await makeHeartbeat(server, "missing", {
      name: `job-${i}`,
      period_seconds: PERIOD_S,
      grace_seconds: 0,
    });
    await ping(on(server, made.ping_url));
    const read = await restCall(server, KEY, "GET", `/projects/missing/heartbeats/job-${i}`);
    if (read.status !== 200 || read.body.data.state !== "up") {
      throw new Error(`job-${i}: ${read.status} ${JSON.stringify(read.body)}`);
    }
    deadlines.set(made.probe_id, Date.parse(read.body.data.next_deadline));
    missing.push(made);
  }
  const downs = () => hook.arrivals().filter((a) => a.type === "probe.down");
  await waitFor(
    "the down notifications",
    () => downs().length >= MISSING,
    60_000 + PERIOD_S * 1000,
  );
  await sleep(2 * PERIOD_S * 1000); // the silent keep failing: no more notifications may come
  const shares = await cpu.end();

  const lateness = (a: Arrival) => a.at - deadlines.get(a.probeId)!;
  const firstDowns = new Map<string, Arrival>();
  for (const a of downs()) if (!firstDowns.has(a.probeId)) firstDowns.set(a.probeId, a);
  const measured = [...firstDowns.values()].filter((a) => deadlines.has(a.probeId));
  console.log(`deadline → notified:  ${spread(measured.map(lateness))}  (target p99 under 1 s)`);

  // Back: each given an hour's period (so that it does not miss again while the others are
  // pinged and their recoveries awaited), then pinged again, on the other instance than before.
  for (const [i, made] of missing.entries()) {
    const server = servers[(i + 1) % servers.length];
    const patched = await restCall(server, KEY, "PATCH", `/projects/missing/heartbeats/job-${i}`, {
      period_seconds: 3600,
      grace_seconds: 3600,
    });
    if (patched.status !== 200) throw new Error(`PATCH job-${i}: ${patched.status}`);
    await ping(on(server, made.ping_url));
  }
  const ups = () => hook.arrivals().filter((a) => a.type === "probe.recovered");
  await waitFor("the recoveries", () => ups().length >= MISSING, 60_000);
  await sleep(3_000); // a second notification of any transition would have come by now

  const byProbe = (type: string) => {
    const counts = new Map<string, number>();
    for (const a of hook.arrivals().filter((x) => x.type === type)) {
      counts.set(a.probeId, (counts.get(a.probeId) ?? 0) + 1);
    }
    return counts;
  };
  for (const type of ["probe.down", "probe.recovered"]) {
    const counts = byProbe(type);
    const once = missing.filter((m) => counts.get(m.probe_id) === 1).length;
    const twice = [...counts.values()].filter((n) => n > 1).length;
    const none = missing.filter((m) => !counts.has(m.probe_id)).length;
    const strangers = [...counts.keys()].filter((id) => !deadlines.has(id)).length;
    console.log(
      `${type.padEnd(16)} exactly once for ${once} of ${MISSING}; more than once ${twice}; ` +
        `never ${none}; for a quiet heartbeat ${strangers}`,
    );
  }
  const arrivals = hook.arrivals();
  const ids = new Set(arrivals.map((a) => a.id));
  console.log(
    `notifications received: ${arrivals.length}, distinct webhook-ids ${ids.size}` +
      (arrivals.length === 2 * MISSING && ids.size === 2 * MISSING
        ? ": exactly one per transition"
        : ": NOT one per transition"),
  );
  shares.print(0, "");
} finally {
  await hook.close();
  await services.close();
}
