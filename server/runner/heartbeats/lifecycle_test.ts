import assert from "node:assert/strict";
import { backends } from "../../testing/app.ts";
import {
  heartbeatApp,
  heartbeatsPath,
  incidentsOf,
  newHeartbeat,
  newProject,
  pingPath,
} from "../../testing/heartbeats.ts";
import { fakeClock } from "../../testing/runner_clock.ts";

const T0 = Date.parse("2031-06-01T12:00:00Z");

for (const backend of backends()) {
  Deno.test(`heartbeats: deletes, disabled projects, the ping limit [${backend}]`, async (t) => {
    const { clock } = fakeClock(T0);
    const { app, api } = await heartbeatApp(backend, { clock });
    const ping = (hb: { ping_url: string }, suffix = "") =>
      api.call("GET", pingPath(hb.ping_url, suffix), { key: null });
    try {
      await t.step("deleting a heartbeat resolves its open incident", async () => {
        const project = await newProject(api);
        const hb = await newHeartbeat(api, project, { name: "gone", period_seconds: 60 });
        assert.equal((await ping(hb, "fail")).status, 200);
        assert.equal((await incidentsOf(api, project, hb.probe_id))[0].state, "open");
        assert.equal((await api.delete(heartbeatsPath(project, "gone"))).status, 204);
        const all = await api.get(`/api/v1/incidents?project=${project}`);
        assert.deepEqual(all.body.data.map((i: { state: string }) => i.state), ["resolved"]);
        assert.equal((await ping(hb)).status, 404);
      });

      await t.step("deleting a project deletes its heartbeats", async () => {
        const project = await newProject(api);
        const hb = await newHeartbeat(api, project, { name: "job", period_seconds: 60 });
        assert.equal((await ping(hb)).status, 200);
        const deleted = await api.delete(`/api/v1/projects/${project}`);
        assert.ok(deleted.status < 300, deleted.text);
        assert.equal((await ping(hb)).status, 404);
        const left = await app.database.db.selectFrom("probes").select("key")
          .where("project", "=", project).execute();
        assert.deepEqual(left, []);
      });

      await t.step("a disabled project's pings are kept and move no state", async () => {
        const project = await newProject(api);
        const hb = await newHeartbeat(api, project, { name: "off", period_seconds: 60 });
        const off = await api.patch(`/api/v1/projects/${project}`, { status: "disabled" });
        assert.equal(off.status, 200, off.text);
        assert.equal((await ping(hb, "fail")).status, 200);
        const read = (await api.get(heartbeatsPath(project, "off"))).body.data;
        assert.equal(read.state, "new");
        assert.equal(read.pings_total, 1);
      });

      await t.step("past its rate a token is answered 429 with Retry-After", async () => {
        const project = await newProject(api);
        const hb = await newHeartbeat(api, project, { name: "flood", period_seconds: 60 });
        const answers = await Promise.all(
          Array.from({ length: 450 }, () => ping(hb, "log")),
        );
        // The clock stands still: the burst (twice the rate) and no more.
        const refused = answers.filter((a) => a.status === 429);
        assert.equal(refused.length, 50);
        assert.ok(Number(refused[0].headers.get("retry-after")) >= 1);
        const ok = answers.filter((a) => a.status === 200).length;
        const read = (await api.get(heartbeatsPath(project, "flood"))).body.data;
        assert.equal(read.pings_total, ok);
      });
    } finally {
      await app.close();
    }
  });
}
