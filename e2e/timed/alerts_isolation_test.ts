/**
 * Delivery isolation: a receiver that hangs, one that answers 500 and one that redirects, beside
 * one that works, through the real path: targets made over the REST API, probes failing by
 * run-now, the app's own deliverer sending to local receivers. The working target's notifications
 * arrive promptly; the others' stay in the outbox, and the hanging one's are delivered once it
 * answers again. And slots per target: with 6 or 60 receivers that accept the connection and
 * never answer filling every shared slot, a working target's notification is sent while all their
 * sends are still open, on a slot of its own. In the end-to-end tier: the receivers hang for real
 * seconds and the working target must be served within `PROMPT_MS`, a bound a machine busy with
 * the fast tier's files can stretch. The claims' share and slot rules alone are in
 * `server/alerting/isolation_test.ts`.
 */
import assert from "node:assert/strict";
import { createApp } from "../../server/app.ts";
import { createLogger } from "../../server/base/log.ts";
import { executeProbe } from "../../server/runner/execute.ts";
import {
  type Backend,
  backends,
  freshDatabase,
  LOOPBACK_ONLY,
  TEST_API_KEY,
  TestClient,
} from "../../server/testing/app.ts";
import { type ReceivedCall, webhookReceiver } from "../../server/testing/receivers.ts";
import { silentReceiver } from "../../server/testing/silent_receiver.ts";
import { startTarget } from "../../server/testing/target_server.ts";
import { DEFAULT_CONCURRENCY, DEFAULT_PER_TARGET } from "../../server/alerting/deliverer.ts";

const PROBES = 30;
/** Generous: the working target's notifications took 20 s and more when one receiver hung. */
const PROMPT_MS = 3_000;

async function until(what: string, ready: () => boolean | Promise<boolean>, ms: number) {
  const deadline = Date.now() + ms;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`${what}: not so after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const idsOf = (calls: ReceivedCall[]) => new Set(calls.map((c) => c.headers.get("webhook-id")));

/** The app on a fresh database, sending and running probes on loopback; sends end after `ms`. */
async function alertingApp(backend: Backend, ms: number) {
  const app = await createApp({
    database: await freshDatabase(backend),
    apiKeys: [TEST_API_KEY],
    log: createLogger("silent"),
    notify: { policy: LOOPBACK_ONLY, timeoutMs: ms },
    runProbe: (t) => executeProbe(t, { policy: LOOPBACK_ONLY, timeoutMs: 5_000 }),
  });
  return { app, api: new TestClient(app.handler), db: app.database.db };
}

for (const backend of backends()) {
  Deno.test(`delivery isolation: a hanging receiver slows only itself [${backend}]`, async () => {
    let recover = () => {};
    const hang = webhookReceiver([200], { hang: new Promise<void>((r) => recover = r) });
    const failing = webhookReceiver([500]);
    const redirecting = webhookReceiver([302]);
    const ok = webhookReceiver([200]);
    const target = await startTarget();
    // Sends time out after 2 s (10 s in production): the hanging receiver's attempts end.
    const { app, api, db } = await alertingApp(backend, 2_000);
    try {
      const receivers = { hang, failing, redirecting, ok };
      for (const [name, r] of Object.entries(receivers)) {
        const made = await api.post("/api/v1/notification-targets", {
          name,
          kind: "webhook",
          url: r.url,
        });
        assert.equal(made.status, 201, made.text);
      }
      const policy = await api.patch("/api/v1/settings/alerts", {
        targets: Object.keys(receivers),
        failure_threshold: 1,
      });
      assert.equal(policy.status, 200, policy.text);
      assert.equal((await api.post("/api/v1/projects", { project: "iso" })).status, 201);
      target.setHealth(500, { status: "DOWN" });
      const ids: string[] = [];
      for (let i = 0; i < PROBES; i++) {
        const made = await api.post("/api/v1/projects/iso/probes", {
          url: `${target.origin}/health?i=${i}`,
        });
        assert.equal(made.status, 201, made.text);
        ids.push(made.body.data.probe_id);
      }

      app.deliverer.start();
      // Each failing run opens an incident: a probe.down to each of the four targets.
      const ranAt = new Map<string, number>();
      for (const id of ids) {
        const run = await api.post(`/api/v1/projects/iso/probes/${id}/run`);
        assert.equal(run.status, 200, run.text);
        assert.equal(run.body.data.outcome, "down");
        ranAt.set(id, Date.now());
      }
      await until("the working target's notifications", () => ok.received.length >= PROBES, 60_000);
      const late = ok.received.map((call) => {
        const event = JSON.parse(call.body);
        return { probe: event.data.probe_id, ms: call.at - ranAt.get(event.data.probe_id)! };
      }).filter((d) => d.ms > PROMPT_MS);
      assert.deepEqual(late, [], `each within ${PROMPT_MS} ms of its run`);
      assert.equal(idsOf(ok.received).size, PROBES);

      // The others' notifications are kept: pending, none given up, none delivered. (A call
      // arrives before its attempt is recorded: the working target's are waited for.)
      await until("the working target's deliveries recorded", async () => {
        const { n } = await db.selectFrom("notifications")
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .where("target", "=", "ok").where("status", "=", "delivered").executeTakeFirstOrThrow();
        return Number(n) === PROBES;
      }, 10_000);
      const rows = await db.selectFrom("notifications")
        .select(["target", "status", (eb) => eb.fn.countAll<string>().as("n")])
        .groupBy(["target", "status"]).orderBy("target").execute();
      assert.deepEqual(rows.map((r) => [r.target, r.status, Number(r.n)]), [
        ["failing", "pending", PROBES],
        ["hang", "pending", PROBES],
        ["ok", "delivered", PROBES],
        ["redirecting", "pending", PROBES],
      ]);
      // A target holds its share of the slots, not all of them, and is paused after 3 failures
      // in a row: each bad receiver got its first share's calls and a few trials for its 30
      // notifications, which were not charged an attempt each while it was paused.
      const few = DEFAULT_PER_TARGET + 6;
      assert.ok(few < PROBES, "a share and a few trials are fewer than a call each");
      for (const [name, r] of Object.entries({ hang, failing, redirecting })) {
        assert.ok(r.received.length < few, `${r.received.length} calls to ${name}`);
        const { attempts } = await db.selectFrom("notifications")
          .select((eb) => eb.fn.sum<string>("attempts").as("attempts"))
          .where("target", "=", name).executeTakeFirstOrThrow();
        assert.ok(Number(attempts) < few, `${attempts} attempts for ${name}`);
      }

      // It answers again: every one of its notifications arrives, each under its own id.
      recover();
      await until("the hanging target's notifications", async () => {
        const left = await db.selectFrom("notifications").select("id")
          .where("target", "=", "hang").where("status", "!=", "delivered").execute();
        return left.length === 0;
      }, 60_000);
      assert.equal(idsOf(hang.received).size, PROBES);
    } finally {
      recover();
      await app.close();
      await Promise.all([hang.close(), failing.close(), redirecting.close(), ok.close()]);
      await target.close();
    }
  });
}

/** A policy names at most 20 targets: the hanging ones go 15 to a project. */
const PER_PROJECT = 15;

for (const backend of backends()) {
  for (const hanging of [6, 60]) {
    Deno.test(`${hanging} hanging receivers do not hold up a working one [${backend}]`, async () => {
      const silent = Array.from({ length: hanging }, silentReceiver);
      const ok = webhookReceiver([200]);
      const target = await startTarget();
      // The production timeout: the hanging sends outlast the test.
      const { app, api, db } = await alertingApp(backend, 10_000);
      const made = async (path: string, body: unknown) => {
        const answer = await api.post(path, body);
        assert.equal(answer.status, 201, answer.text);
        return answer.body.data;
      };
      try {
        for (const [i, r] of silent.entries()) {
          await made("/api/v1/notification-targets", {
            name: `hang${i}`,
            kind: "webhook",
            url: r.url,
          });
        }
        await made("/api/v1/notification-targets", { name: "ok", kind: "webhook", url: ok.url });
        const policy = await api.patch("/api/v1/settings/alerts", {
          targets: ["ok"],
          failure_threshold: 1,
        });
        assert.equal(policy.status, 200, policy.text);
        target.setHealth(500, { status: "DOWN" });
        // Enough failing probes that the hanging targets' notifications outnumber the shared
        // slots, no more than a target's share of them each: 4 each for 6, 1 each for 60.
        const each = Math.min(DEFAULT_PER_TARGET, Math.ceil((DEFAULT_CONCURRENCY + 1) / hanging));
        const jams: string[][] = [];
        for (let j = 0; j * PER_PROJECT < hanging; j++) {
          const project = `jam${j}`;
          await made("/api/v1/projects", { project });
          const targets = silent.slice(j * PER_PROJECT, (j + 1) * PER_PROJECT)
            .map((_, i) => `hang${j * PER_PROJECT + i}`);
          const overrides = await api.patch(`/api/v1/projects/${project}/alerts`, { targets });
          assert.equal(overrides.status, 200, overrides.text);
          for (let i = 0; i < each; i++) {
            const probe = await made(`/api/v1/projects/${project}/probes`, {
              url: `${target.origin}/health?p=${project}&i=${i}`,
            });
            jams.push([project, probe.probe_id]);
          }
        }
        await made("/api/v1/projects", { project: "work" });
        const work = await made("/api/v1/projects/work/probes", {
          url: `${target.origin}/health?p=work`,
        });

        app.deliverer.start();
        for (const [project, id] of jams) {
          const run = await api.post(`/api/v1/projects/${project}/probes/${id}/run`);
          assert.equal(run.status, 200, run.text);
        }
        const open = () => silent.reduce((n, r) => n + r.open(), 0);
        const notifications = hanging * each;
        assert.ok(notifications > DEFAULT_CONCURRENCY);
        // Every shared slot is taken by a send that will hang.
        await until("the hanging sends", () => open() >= DEFAULT_CONCURRENCY, 10_000);

        const run = await api.post(`/api/v1/projects/work/probes/${work.probe_id}/run`);
        assert.equal(run.status, 200, run.text);
        await until("the working target's notification", () => ok.received.length > 0, 30_000);
        const arrived = ok.received[0].at;
        // No hanging send had ended (timed out, freeing a slot) when it arrived.
        const ended = silent.flatMap((r) => r.closedAt).filter((at) => at <= arrived);
        assert.deepEqual(ended, [], "hanging sends ended before the working one arrived");
        assert.equal(JSON.parse(ok.received[0].body).data.probe_id, work.probe_id);

        // Each hanging target holds no more than its share; all of them, on their own slots and
        // the shared ones, hold every one of their notifications in flight.
        await until("every hanging notification sent", () => open() === notifications, 10_000);
        for (const [i, r] of silent.entries()) {
          assert.ok(r.open() <= DEFAULT_PER_TARGET, `hang${i} holds ${r.open()}`);
        }
        // Nothing is dropped: theirs are pending still, the working one's delivered (its
        // attempt is recorded after the call arrives).
        const rows = () => db.selectFrom("notifications").select(["target", "status"]).execute();
        await until("the delivery recorded", async () => {
          return (await rows()).some((r) => r.status === "delivered");
        }, 10_000);
        const all = await rows();
        assert.equal(all.length, notifications + 1);
        assert.deepEqual(
          all.filter((r) => r.status !== "pending").map((r) => [r.target, r.status]),
          [["ok", "delivered"]],
        );
      } finally {
        silent.forEach((r) => r.close());
        await app.close();
        await ok.close();
        await target.close();
      }
    });
  }
}
