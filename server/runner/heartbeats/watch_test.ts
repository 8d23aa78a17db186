import assert from "node:assert/strict";
import { backends, type TestClient } from "../../testing/app.ts";
import {
  heartbeatApp,
  heartbeatsPath,
  incidentsOf,
  newHeartbeat,
  newProject,
  pingPath,
} from "../../testing/heartbeats.ts";
import { fakeClock } from "../../testing/runner_clock.ts";
import { json } from "../../storage/json.ts";

const SECOND = 1000;
const T0 = Date.parse("2031-06-01T12:00:00Z");

for (const backend of backends()) {
  Deno.test(`heartbeat deadlines on a fake clock [${backend}]`, async (t) => {
    const { fake, clock } = fakeClock(T0);
    const { app, api } = await heartbeatApp(backend, { clock });
    /** Moves the clock to `at` and lets the watch look once. */
    const at = async (ms: number) => {
      fake.setSystemTime(ms);
      await app.heartbeats.sweep();
    };
    const state = async (project: string, name: string) =>
      (await api.get(heartbeatsPath(project, name))).body.data.state;
    const ping = (hb: { ping_url: string }, suffix = "") =>
      api.call("GET", pingPath(hb.ping_url, suffix), { key: null });
    try {
      const project = await newProject(api);

      await t.step(
        "no success by last success + period + grace is down; a ping recovers",
        async () => {
          fake.setSystemTime(T0);
          const hb = await newHeartbeat(api, project, {
            name: "period",
            period_seconds: 60,
            grace_seconds: 30,
          });
          await at(T0 + 10 * SECOND);
          assert.equal((await ping(hb)).status, 200);
          await at(T0 + 99 * SECOND);
          assert.equal(await state(project, "period"), "up");
          await at(T0 + 100 * SECOND);
          assert.equal(await state(project, "period"), "down");
          const [open] = await incidentsOf(api, project, hb.probe_id);
          assert.equal(open.state, "open");
          assert.match(open.last_error!, /no ping by its deadline 2031-06-01T12:01:40\.000Z/);
          // Silent on: one more miss a period later, still one incident.
          await at(T0 + 160 * SECOND);
          assert.equal((await incidentsOf(api, project, hb.probe_id)).length, 1);
          await at(T0 + 170 * SECOND);
          assert.equal((await ping(hb)).status, 200);
          assert.equal(await state(project, "period"), "up");
          assert.equal((await incidentsOf(api, project, hb.probe_id))[0].state, "resolved");
        },
      );

      await t.step("before its first ping the deadline counts from creation", async () => {
        const created = T0 + 1000 * SECOND;
        fake.setSystemTime(created);
        const hb = await newHeartbeat(api, project, { name: "never", period_seconds: 60 });
        assert.equal(hb.state, "new");
        await at(created + 119 * SECOND);
        assert.equal(await state(project, "never"), "new");
        await at(created + 120 * SECOND);
        assert.equal(await state(project, "never"), "down");
      });

      await t.step("a cron deadline follows the zone across a daylight-saving change", async () => {
        // Berlin moves from +01:00 to +02:00 at 02:00 on 2026-03-29: 03:00 there is 02:00 UTC
        // on the 28th and 01:00 UTC on the 29th.
        const start = Date.parse("2026-03-28T02:00:30Z");
        fake.setSystemTime(start);
        const hb = await newHeartbeat(api, project, {
          name: "nightly",
          schedule: "0 3 * * *",
          timezone: "Europe/Berlin",
          grace_seconds: 600,
        });
        assert.equal((await ping(hb)).status, 200);
        const read = (await api.get(heartbeatsPath(project, "nightly"))).body.data;
        assert.equal(read.next_deadline, "2026-03-29T01:10:00.000Z");
        await at(Date.parse("2026-03-29T01:09:59Z"));
        assert.equal(await state(project, "nightly"), "up");
        await at(Date.parse("2026-03-29T01:10:00Z"));
        assert.equal(await state(project, "nightly"), "down");
      });

      await t.step("a start without its success within max_duration is down", async () => {
        const begin = T0 + 5000 * SECOND;
        fake.setSystemTime(begin);
        const hb = await newHeartbeat(api, project, {
          name: "long",
          period_seconds: 3600,
          grace_seconds: 600,
          max_duration_seconds: 120,
        });
        assert.equal((await ping(hb)).status, 200);
        assert.equal((await ping(hb, "start")).status, 200);
        const read = (await api.get(heartbeatsPath(project, "long"))).body.data;
        assert.equal(read.next_deadline, new Date(begin + 120 * SECOND).toISOString());
        await at(begin + 119 * SECOND);
        assert.equal(await state(project, "long"), "up");
        await at(begin + 120 * SECOND);
        assert.equal(await state(project, "long"), "down");
        const [open] = await incidentsOf(api, project, hb.probe_id);
        assert.match(open.last_error!, /did not finish within 120 s/);
        const after = (await api.get(heartbeatsPath(project, "long"))).body.data;
        assert.equal(after.next_deadline, new Date(begin + 4200 * SECOND).toISOString());
      });

      await t.step("a run shorter than min_duration is down", async () => {
        const begin = T0 + 10_000 * SECOND;
        fake.setSystemTime(begin);
        const hb = await newHeartbeat(api, project, {
          name: "quick",
          period_seconds: 3600,
          min_duration_seconds: 60,
        });
        assert.equal((await ping(hb, "start")).status, 200);
        fake.setSystemTime(begin + 5 * SECOND);
        assert.equal((await ping(hb)).status, 200);
        assert.equal(await state(project, "quick"), "down");
        const [open] = await incidentsOf(api, project, hb.probe_id);
        assert.match(open.last_error!, /finished 5 s after its start, sooner than/);
        assert.equal((await ping(hb, "start")).status, 200);
        fake.setSystemTime(begin + 100 * SECOND);
        assert.equal((await ping(hb)).status, 200);
        assert.equal(await state(project, "quick"), "up");
      });

      await t.step("a deadline inside a maintenance window is no failure", async () => {
        const own = await newProject(api);
        const begin = T0 + 20_000 * SECOND;
        fake.setSystemTime(begin);
        const hb = await newHeartbeat(api, own, {
          name: "kept",
          period_seconds: 60,
          grace_seconds: 0,
        });
        assert.equal((await ping(hb)).status, 200);
        const window = await api.post(`/api/v1/projects/${own}/maintenance`, {
          starts_at: new Date(begin + 30 * SECOND).toISOString(),
          ends_at: new Date(begin + 600 * SECOND).toISOString(),
        });
        assert.equal(window.status, 201, window.text);
        await at(begin + 60 * SECOND);
        assert.equal(await state(own, "kept"), "up");
        const read = (await api.get(heartbeatsPath(own, "kept"))).body.data;
        // Counted again from the window's end, as if the job had pinged then.
        assert.equal(read.next_deadline, new Date(begin + 660 * SECOND).toISOString());
        await at(begin + 660 * SECOND);
        assert.equal(await state(own, "kept"), "down");
      });
    } finally {
      await app.close();
    }
  });
}

/** Answers `n` pings of `hb` split between two clients. */
async function pingBoth(a: TestClient, b: TestClient, url: string, n: number) {
  const answers = await Promise.all(
    Array.from(
      { length: n },
      (_, i) => (i % 2 === 0 ? a : b).call("POST", pingPath(url), { key: null, raw: `ping ${i}` }),
    ),
  );
  return answers.map((x) => x.status);
}

if (Deno.env.get("TEST_DATABASE_URL")) {
  Deno.test("heartbeats with two instances on one PostgreSQL database", async (t) => {
    const { createPostgresDatabase } = await import("../../testing/app.ts");
    const { openDatabase } = await import("../../storage/database.ts");
    const { url, drop } = await createPostgresDatabase();
    const { fake, clock } = fakeClock(T0);
    const one = await heartbeatApp("postgres", {
      clock,
      database: await openDatabase({ kind: "postgres", url }),
    });
    const two = await heartbeatApp("postgres", {
      clock,
      database: await openDatabase({ kind: "postgres", url }),
    });
    try {
      const project = await newProject(one.api);
      const hb = await newHeartbeat(one.api, project, {
        name: "shared",
        period_seconds: 60,
        grace_seconds: 0,
      });

      await t.step("pings through both are each counted once", async () => {
        const statuses = await pingBoth(one.api, two.api, hb.ping_url, 200);
        assert.ok(statuses.every((s) => s === 200), String(statuses));
        const read = (await two.api.get(heartbeatsPath(project, "shared"))).body.data;
        assert.equal(read.pings_total, 200);
        const kept = await one.api.get(`${heartbeatsPath(project, "shared")}/pings`);
        assert.equal(kept.body.data.length, 100);
        assert.equal(kept.body.data[0].n, 200);
      });

      await t.step("a missed deadline is recorded and notified once when both watch", async () => {
        const db = one.app.database.db;
        await db.updateTable("alert_settings").set({ targets: json(["log"]) }).execute();
        fake.setSystemTime(T0 + 60 * SECOND);
        const taken = await Promise.all([one.app.heartbeats.sweep(), two.app.heartbeats.sweep()]);
        assert.deepEqual(taken.sort(), [0, 1]);
        const incidents = await incidentsOf(one.api, project, hb.probe_id);
        assert.equal(incidents.length, 1);
        const rows = await one.app.database.db.selectFrom("probe_results")
          .select((eb) => eb.fn.countAll().as("n"))
          .where("outcome", "=", "down").execute();
        assert.equal(Number(rows[0].n), 1);
        const sent = await db.selectFrom("notifications").select(["event"]).execute();
        assert.equal(sent.length, 1);
      });
    } finally {
      await one.app.close();
      await two.app.close();
      await drop();
    }
  });
}

Deno.test("the watch's loop finds a passed deadline on its own [pglite]", async () => {
  const { fake, clock } = fakeClock(T0);
  const { app, api } = await heartbeatApp("pglite", { clock });
  app.heartbeats.watch.start();
  try {
    const project = await newProject(api);
    await newHeartbeat(api, project, { name: "looped", period_seconds: 10, grace_seconds: 0 });
    const state = async () => (await api.get(heartbeatsPath(project, "looped"))).body.data.state;
    await fake.tickAsync(9_750);
    assert.equal(await state(), "new");
    // The loop looks every 250 ms of the clock: once past the deadline, it is down.
    let seen = "new";
    for (let i = 0; i < 40 && seen !== "down"; i++) {
      await fake.tickAsync(250);
      await new Promise((resolve) => setTimeout(resolve, 100));
      seen = await state();
    }
    assert.equal(seen, "down");
  } finally {
    await app.close();
  }
});
