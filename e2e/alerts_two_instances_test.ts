/**
 * Escalation and flapping with two service instances on one PostgreSQL database, each with its
 * deliverer started (as `main.ts` starts it: its poll, woken by the outbox's NOTIFY), sending to
 * webhook targets on a loopback receiver that counts what it gets by `webhook-id`. Runs are
 * recorded through the runner's store at chosen times (a fake clock for the runs) so that an
 * escalation step, or a flapping probe's settling, comes due on the real clock while both
 * deliverers poll: each must reach the receiver once, whichever instance sends it. In the
 * end-to-end tier: the deliveries come due and are watched for duplicates over real seconds.
 */
import assert from "node:assert/strict";
import { createApp } from "../server/app.ts";
import { openDatabase } from "../server/storage/database.ts";
import { createLogger } from "../server/base/log.ts";
import {
  createPostgresDatabase,
  LOOPBACK_ONLY,
  TEST_API_KEY,
  TestClient,
  uniqueName,
} from "../server/testing/app.ts";
import { insertProbe, runAt } from "../server/testing/alert_runs.ts";

const MINUTE = 60_000;

interface Arrival {
  id: string;
  path: string;
  type: string;
  probe: string;
  incident: string | null;
  step: number | null;
}

/** A webhook receiver: every call's `webhook-id`, path, type, probe, incident and step. */
function receiver() {
  const arrivals: Arrival[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const event = await req.json();
    arrivals.push({
      id: req.headers.get("webhook-id") ?? "",
      path: new URL(req.url).pathname,
      type: event.type,
      probe: event.data.probe_id,
      incident: event.data.incident_id,
      step: event.data.escalation_step ?? null,
    });
    return new Response(null, { status: 204 });
  });
  return {
    url: (path: string) => `http://127.0.0.1:${server.addr.port}${path}`,
    arrivals,
    close: () => server.shutdown(),
  };
}

/** Two instances of the service on a new PostgreSQL database, their deliverers started. */
async function twoInstances() {
  const { url, drop } = await createPostgresDatabase();
  const instance = async () => {
    const app = await createApp({
      database: await openDatabase({ kind: "postgres", url }),
      apiKeys: [TEST_API_KEY],
      log: createLogger("silent"),
      remoteRuns: { syncEveryMs: 0 },
      notify: { policy: LOOPBACK_ONLY },
    });
    return { app, api: new TestClient(app.handler) };
  };
  const instances = [await instance(), await instance()];
  return {
    instances,
    db: instances[0].app.database.db,
    start: () => instances.forEach((i) => i.app.deliverer.start()),
    close: async () => {
      for (const i of instances) await i.app.close();
      await drop();
    },
  };
}

/**
 * Webhook targets named `targets` on `hook` (made through the first instance) and a project whose
 * policy (set through the second) alerts on the first failure and recovery, with `policy` more.
 */
async function alertingProject(
  service: Awaited<ReturnType<typeof twoInstances>>,
  hook: ReturnType<typeof receiver>,
  targets: string[],
  policy: Record<string, unknown>,
): Promise<string> {
  const [one, two] = service.instances;
  for (const name of targets) {
    const res = await one.api.post("/api/v1/notification-targets", {
      name,
      kind: "webhook",
      url: hook.url(`/${name}`),
    });
    assert.equal(res.status, 201, res.text);
  }
  const project = uniqueName();
  assert.equal((await one.api.post("/api/v1/projects", { project })).status, 201);
  const res = await two.api.patch(`/api/v1/projects/${project}/alerts`, {
    failure_threshold: 1,
    success_threshold: 1,
    ...policy,
  });
  assert.equal(res.status, 200, res.text);
  return project;
}

async function waitFor(what: string, done: () => boolean, ms = 30_000) {
  const until = Date.now() + ms;
  while (!done()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** How many arrivals of each `type path` line, sorted: one receiver's view of one probe. */
function tally(arrivals: Arrival[]): string[] {
  const counts = new Map<string, number>();
  for (const a of arrivals) {
    const line = `${a.type}${a.step === null ? "" : ` step ${a.step}`} ${a.path}`;
    counts.set(line, (counts.get(line) ?? 0) + 1);
  }
  return [...counts].map(([line, n]) => `${n} × ${line}`).sort();
}

Deno.test({
  name: "two instances: an escalation step reaches its target once, none after acknowledging",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const service = await twoInstances();
    const hook = receiver();
    try {
      const [one, two] = service.instances;
      const project = await alertingProject(service, hook, ["first", "oncall"], {
        targets: ["first"],
        escalation: [{ after_minutes: 1, targets: ["oncall"] }],
      });
      const PROBES = 12;
      // The runs fail a minute ago, less 3 s: the step comes due 3 s from now, with both
      // deliverers polling.
      const keys: Record<string, string> = {};
      for (let i = 0; i < PROBES; i++) {
        keys[`p${i}`] = await insertProbe(service.db, project, `p${i}`, Date.now() - 2 * MINUTE);
      }
      const failedAt = Date.now() - MINUTE + 3_000;
      await runAt(
        service.db,
        Object.fromEntries(Object.values(keys).map((k) => [k, "down"])),
        failedAt,
      );
      const incidents = await one.api.get(`/api/v1/incidents?project=${project}&state=open`);
      assert.equal(incidents.body.data.length, PROBES, incidents.text);
      const acked = incidents.body.data.find((i: { probe_id: string }) => i.probe_id === "p0");
      const ack = await two.api.post(`/api/v1/incidents/${acked.id}/acknowledge`);
      assert.equal(ack.status, 200, ack.text);
      service.start();

      const steps = () => hook.arrivals.filter((a) => a.step !== null).length;
      await waitFor("the escalation steps", () => steps() >= PROBES - 1);
      // Long enough for a second send of any of them: several polls of both deliverers.
      await new Promise((r) => setTimeout(r, 2_000));
      const ids = hook.arrivals.map((a) => a.id);
      assert.equal(new Set(ids).size, ids.length, "no notification arrived twice");
      for (let i = 0; i < PROBES; i++) {
        const mine = hook.arrivals.filter((a) => a.probe === `p${i}`);
        assert.deepEqual(
          tally(mine),
          i === 0
            ? ["1 × probe.acknowledged /first", "1 × probe.down /first"]
            : ["1 × probe.down /first", "1 × probe.down step 1 /oncall"],
          `p${i}`,
        );
      }
      const left = await service.db.selectFrom("incidents")
        .select(["escalation_step", "next_escalation_at", "acknowledged_at"]).execute();
      for (const incident of left) {
        if (incident.acknowledged_at !== null) assert.equal(incident.escalation_step, 0);
        else assert.deepEqual([incident.escalation_step, incident.next_escalation_at], [1, null]);
      }
    } finally {
      await service.close();
      await hook.close();
    }
  },
});

Deno.test({
  name: "two instances: a flapping probe settles with one notification",
  ignore: !Deno.env.get("TEST_DATABASE_URL"),
  fn: async () => {
    const service = await twoInstances();
    const hook = receiver();
    try {
      const project = await alertingProject(service, hook, ["team"], {
        targets: ["team"],
        flap_changes: 2,
        flap_minutes: 1,
      });
      const PROBES = 12;
      // up, down, up, down a second apart, the last a minute ago less 3 s: flapping from the
      // third change, settled (down) 3 s from now, with both deliverers polling.
      const keys: string[] = [];
      for (let i = 0; i < PROBES; i++) {
        keys.push(await insertProbe(service.db, project, `p${i}`, Date.now() - 2 * MINUTE));
      }
      const lastChange = Date.now() - MINUTE + 3_000;
      const outcomes = ["up", "down", "up", "down"] as const;
      for (const [n, outcome] of outcomes.entries()) {
        const at = lastChange - (outcomes.length - 1 - n) * 1_000;
        await runAt(service.db, Object.fromEntries(keys.map((k) => [k, outcome])), at);
      }
      service.start();
      const settled = () => hook.arrivals.filter((a) => a.type === "probe.down").length;
      await waitFor("the settling", () => settled() >= 2 * PROBES);
      await new Promise((r) => setTimeout(r, 2_000));
      const ids = hook.arrivals.map((a) => a.id);
      assert.equal(new Set(ids).size, ids.length, "no notification arrived twice");
      const open = await service.db.selectFrom("incidents").select(["id", "probe_id"])
        .where("resolved_at", "is", null).execute();
      assert.equal(open.length, PROBES);
      for (let i = 0; i < PROBES; i++) {
        const mine = hook.arrivals.filter((a) => a.probe === `p${i}`);
        // Sent side by side: in any order.
        assert.deepEqual(tally(mine), [
          "1 × probe.flapping /team",
          "1 × probe.recovered /team",
          "2 × probe.down /team",
        ], `p${i}`);
        const incident = String(open.find((o) => o.probe_id === `p${i}`)!.id);
        assert.equal(
          mine.filter((a) => a.type === "probe.down" && a.incident === incident).length,
          1,
          "the settling names the open incident, once",
        );
      }
      const verdicts = await service.db.selectFrom("probe_verdicts")
        .select(["flapping_since", "flap_settle_at"]).execute();
      assert.ok(verdicts.every((v) => v.flapping_since === null && v.flap_settle_at === null));
    } finally {
      await service.close();
      await hook.close();
    }
  },
});
