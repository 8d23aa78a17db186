/**
 * `deno run --config deno.dev.json -A bench/notify_kinds.ts [--flips 20] [--sends 200]
 * [--postgres]`: the time from a failing (then passing) run to its
 * notification's arrival, per kind of the on-call, chat and push targets, against loopback
 * receivers shaped like their vendors (the goal: p99 under 1 s per kind).
 *
 * The service in this process (`createApp`, its deliverer started as `main.ts` starts it) on the
 * embedded database, or on PostgreSQL with `--postgres` (TEST_DATABASE_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres, in a database of its own); one target of each kind,
 * its `url` on a receiver of its own that answers as the vendor does and notes each arrival; one
 * project whose policy names them all (thresholds 1); one probe on a local target switched
 * between 500 and 200 `--flips` times (20), each flip run once through run-now. For each
 * notification: from the end of the run that moved the state (its `started_at` plus `duration_ms`)
 * to its arrival, the first flip not counted (it warms the service up). Prints, per kind, the count, p50, p99 and max in milliseconds. Then the kind's
 * own part alone: `--sends` (200) requests made by its provider and sent by the one sender to its
 * receiver, one after the other, from the message to the vendor's answer.
 *
 * Not a test: figures vary with the machine and its load.
 */
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { createApp } from "../server/app.ts";
import { createLogger } from "../server/base/log.ts";
import { executeProbe } from "../server/runner/execute.ts";
import { freshDatabase, LOOPBACK_ONLY, TEST_API_KEY, TestClient } from "../server/testing/app.ts";
import {
  alertMessage,
  sendVia,
  vendorReceiver,
  type VendorReply,
} from "../server/testing/vendor_receiver.ts";
import { providerOf } from "../server/alerting/notify/providers/mod.ts";

const { values } = parseArgs({
  options: {
    flips: { type: "string", default: "20" },
    sends: { type: "string", default: "200" },
    postgres: { type: "boolean" },
  },
});
const flips = Number(values.flips);
if (values.postgres && !Deno.env.get("TEST_DATABASE_URL")) {
  Deno.env.set("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres");
}

const OK = (body: Record<string, unknown>): VendorReply => ({ status: 200, body });
/** Each kind: its vendor's success answer, and its settings given the receiver's origin. */
const KINDS: Record<string, [VendorReply, (origin: string) => Record<string, string>]> = {
  pagerduty: [{ status: 202, body: { status: "success" } }, (o) => ({
    routing_key: "R0ut1ngK3yR0ut1ngK3yR0ut1ngK3y01",
    url: `${o}/v2/enqueue`,
  })],
  opsgenie: [{ status: 202, body: { requestId: "r" } }, (o) => ({ api_key: "k-0123", url: o })],
  teams: [{ status: 202 }, (o) => ({ url: `${o}/workflows/x` })],
  google_chat: [OK({ name: "m" }), (o) => ({ url: `${o}/v1/spaces/A/messages?key=k&token=t` })],
  mattermost: [{ status: 200, body: "ok" }, (o) => ({ url: `${o}/hooks/x` })],
  matrix: [OK({ event_id: "$e" }), (o) => ({
    url: o,
    access_token: "syt_token",
    room_id: "!room:example.org",
  })],
  telegram: [OK({ ok: true }), (o) => ({
    bot_token: "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
    chat_id: "42",
    url: o,
  })],
  ntfy: [OK({ id: "i" }), (o) => ({ url: `${o}/topic` })],
  pushover: [OK({ status: 1 }), (o) => ({
    token: "azGDORePK8gMaC0QOYAMyEEuzJnyUi",
    user: "uQiRzpo4DXghDmr9QzzfQu27cmVRsG",
    url: o,
  })],
  gotify: [OK({ id: 1 }), (o) => ({ url: o, token: "AvKcy9o-yvVhyKd" })],
  twilio_sms: [{ status: 201, body: { sid: "SM1" } }, (o) => ({
    account_sid: "AC0123456789abcdef0123456789abcdef",
    auth_token: "token",
    from: "+15557122661",
    to: "+15558675310",
    url: o,
  })],
};

const q = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];

let status = 500;
const site = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  () => new Response("x", { status }),
);
const receivers = Object.fromEntries(
  Object.entries(KINDS).map(([kind, [reply]]) => [kind, vendorReceiver([reply])]),
);
const arrivals: Record<string, number[]> = Object.fromEntries(
  Object.keys(KINDS).map((k) => [k, []]),
);
const app = await createApp({
  database: await freshDatabase(values.postgres ? "postgres" : "pglite", { reuse: false }),
  apiKeys: [TEST_API_KEY],
  log: createLogger("silent"),
  remoteRuns: { syncEveryMs: 0 },
  notify: { policy: LOOPBACK_ONLY },
  runProbe: (target, hooks) =>
    executeProbe(target, { ...hooks, policy: LOOPBACK_ONLY, timeoutMs: 5_000 }),
});
app.deliverer.start();
const api = new TestClient(app.handler);
try {
  for (const [kind, [, settings]] of Object.entries(KINDS)) {
    const made = await api.post("/api/v1/notification-targets", {
      name: `t-${kind.replace("_", "-")}`,
      kind,
      ...settings(receivers[kind].url),
    });
    if (made.status !== 201) throw new Error(`${kind}: ${made.text}`);
  }
  await api.post("/api/v1/projects", { project: "bench" });
  await api.patch("/api/v1/projects/bench/alerts", {
    targets: Object.keys(KINDS).map((k) => `t-${k.replace("_", "-")}`),
    failure_threshold: 1,
    success_threshold: 1,
  });
  const probe = await api.post("/api/v1/projects/bench/probes", {
    url: `http://127.0.0.1:${site.addr.port}/health`,
    expect: { status: [200] },
  });
  const path = `/api/v1/projects/bench/probes/${probe.body.data.probe_id}/run`;
  /** Each flip's run end (ms), from the second flip on. */
  const runEnds: number[] = [];
  for (let flip = 1; flip <= flips; flip++) {
    status = flip % 2 === 1 ? 500 : 200;
    const run = (await api.post(path)).body.data;
    const ended = Date.parse(run.started_at) + run.duration_ms;
    if (flip > 1) runEnds.push(ended);
    const deadline = Date.now() + 10_000;
    for (const [kind, receiver] of Object.entries(receivers)) {
      while (receiver.received.length < flip && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 1));
      }
      if (receiver.received.length < flip) throw new Error(`${kind}: nothing after 10 s`);
      arrivals[kind].push(receiver.arrivedAt[flip - 1] - ended);
    }
    if (flip === 1) {
      // The first flip warms the service up (its first statements, connections): not counted.
      for (const times of Object.values(arrivals)) times.length = 0;
    }
  }
  console.log(
    `kind          count  p50 ms  p99 ms  max ms  (${values.postgres ? "postgres" : "pglite"})`,
  );
  for (const [kind, times] of Object.entries(arrivals)) {
    const s = [...times].sort((a, b) => a - b);
    console.log(
      `${kind.padEnd(12)} ${String(s.length).padStart(6)} ${String(q(s, 0.5)).padStart(7)} ${
        String(q(s, 0.99)).padStart(7)
      } ${String(s[s.length - 1]).padStart(7)}`,
    );
  }
  await printStages(runEnds);
  console.log(`\nkind          sends  p50 ms  p99 ms  max ms  (provider and sender alone)`);
  for (const [kind, [, settings]] of Object.entries(KINDS)) {
    const provider = providerOf(kind)!;
    const times: number[] = [];
    for (let i = 0; i < Number(values.sends); i++) {
      const start = performance.now();
      const result = await sendVia(
        provider,
        settings(receivers[kind].url),
        alertMessage("probe.down"),
      );
      times.push(performance.now() - start);
      if (result.outcome !== "delivered") throw new Error(`${kind}: ${result.error}`);
    }
    const s = times.sort((a, b) => a - b);
    const ms = (v: number) => v.toFixed(1).padStart(7);
    console.log(
      `${kind.padEnd(12)} ${String(s.length).padStart(6)} ${ms(q(s, 0.5))} ${ms(q(s, 0.99))} ${
        ms(s[s.length - 1])
      }`,
    );
  }
} finally {
  await app.close();
  await site.shutdown();
  for (const r of Object.values(receivers)) await r.close();
}

/**
 * Where the time goes, all kinds together, from the second flip on: the run's end, the
 * recording transaction's start (the notification's `created_at`), the transition as the event
 * says (its `timestamp`, taken in that transaction), the send's start (its attempt's
 * `attempted_at`, right after the claim) and the arrival at the receiver.
 */
async function printStages(runEnds: number[]) {
  const { rows } = await sql<
    { target: string; created_at: Date; stamped: string; attempted_at: Date }
  >`
    select n.target, n.created_at, n.payload->>'timestamp' as stamped, a.attempted_at
    from notifications n join notification_attempts a on a.notification_id = n.id
    where a.outcome = 'delivered' order by n.created_at, n.id`.execute(app.database.db);
  const stages: Record<string, number[]> = {
    "run end → recording": [],
    "recording → event stamped": [],
    "stamped → send started": [],
    "send started → arrival": [],
    "run end → arrival": [],
  };
  for (const kind of Object.keys(KINDS)) {
    const mine = rows.filter((r) => r.target === `t-${kind.replace("_", "-")}`).slice(1);
    mine.forEach((r, i) => {
      const arrival = receivers[kind].arrivedAt[i + 1];
      const recording = new Date(r.created_at).getTime();
      const stamped = Date.parse(r.stamped);
      const sent = new Date(r.attempted_at).getTime();
      stages["run end → recording"].push(recording - runEnds[i]);
      stages["recording → event stamped"].push(stamped - recording);
      stages["stamped → send started"].push(sent - stamped);
      stages["send started → arrival"].push(arrival - sent);
      stages["run end → arrival"].push(arrival - runEnds[i]);
    });
  }
  console.log(`\nstage (every kind)             p50 ms  p99 ms  max ms`);
  for (const [stage, times] of Object.entries(stages)) {
    const s = [...times].sort((a, b) => a - b);
    console.log(
      `${stage.padEnd(30)} ${String(q(s, 0.5)).padStart(6)} ${String(q(s, 0.99)).padStart(7)} ${
        String(s[s.length - 1]).padStart(7)
      }`,
    );
  }
}
