/**
 * The runners' schedule sync skips its anti-join while nothing it follows from changed, and runs
 * it when a probe is created, a probe's or a project's locations change, or `fullEveryMs` passed.
 * Probes and locations are made through the API; the schedule rows are read back.
 */
import assert from "node:assert/strict";
import { backends, startTestApp, TestClient, uniqueName } from "../testing/app.ts";
import { createScheduleSync, scheduleFingerprint } from "./schedule_sync.ts";

const FULL_EVERY_MS = 60_000;

for (const backend of backends()) {
  Deno.test(`schedule sync follows probes and locations, and only them [${backend}]`, async () => {
    const app = await startTestApp(backend);
    const api = new TestClient(app.handler);
    const db = app.database.db;
    const schedules = createScheduleSync(db, { intervalMs: 60_000, fullEveryMs: FULL_EVERY_MS });
    const rowsOf = async (project: string) =>
      (await db.selectFrom("probe_schedule").innerJoin("probes", "probes.key", "probe_key")
        .select(["probes.probe_id", "probe_schedule.location"])
        .where("probes.project", "=", project).orderBy("probe_schedule.location").execute())
        .map((r) => r.location);
    try {
      const project = uniqueName();
      const office = uniqueName();
      assert.equal((await api.post("/api/v1/locations", { name: office })).status, 201);
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      const created = await api.post(`/api/v1/projects/${project}/probes`, {
        url: "https://example.test/health",
      });
      assert.equal(created.status, 201);
      const probe = created.body.data.probe_id as string;
      let t = Date.now();
      await schedules.sync(t);
      assert.deepEqual(await rowsOf(project), [""]);

      // A row removed behind the API's back: nothing the sync follows changed, so it is not
      // seen until the periodic anti-join.
      await db.deleteFrom("probe_schedule").where("location", "=", "")
        .where(
          "probe_key",
          "in",
          db.selectFrom("probes").select("key").where("project", "=", project),
        )
        .execute();
      const print = await scheduleFingerprint(db);
      assert.equal(await schedules.sync(t += 1_000), 0);
      assert.deepEqual(await rowsOf(project), []);
      assert.equal(await scheduleFingerprint(db), print);
      assert.equal(await schedules.sync(t += FULL_EVERY_MS), 1);
      assert.deepEqual(await rowsOf(project), [""]);

      // A probe's own locations changed: its new location's row at the next sync.
      const patched = await api.patch(`/api/v1/projects/${project}/probes/${probe}`, {
        locations: ["local", office],
      });
      assert.equal(patched.status, 200);
      assert.notEqual(await scheduleFingerprint(db), print);
      await schedules.sync(t += 1_000);
      assert.deepEqual(await rowsOf(project), ["", office].sort());

      // A project's default locations: its probes without their own follow them (the other
      // probe's built-in row goes with the change itself).
      const other = await api.post(`/api/v1/projects/${project}/probes`, {
        url: "https://example.test/other",
      });
      assert.equal(other.status, 201);
      await schedules.sync(t += 1_000);
      const defaults = await api.patch(`/api/v1/projects/${project}`, {
        default_locations: [office],
      });
      assert.equal(defaults.status, 200);
      assert.equal(await schedules.sync(t += 1_000), 1);
      assert.deepEqual(await rowsOf(project), ["", office, office].sort());

      // Nothing changed since: no anti-join, nothing added.
      const quiet = await scheduleFingerprint(db);
      assert.equal(await schedules.sync(t += 1_000), 0);
      assert.equal(await scheduleFingerprint(db), quiet);
    } finally {
      await app.close();
    }
  });
}
