import assert from "node:assert/strict";
import { backends, BASE, TEST_READ_KEY } from "../testing/app.ts";
import { heartbeatApp, heartbeatsPath, newHeartbeat, newProject } from "../testing/heartbeats.ts";

const T0 = Date.parse("2031-06-01T12:00:00Z");
const fixedClock = { now: () => T0, setTimeout: () => 0, clearTimeout: () => {} };

for (const backend of backends()) {
  Deno.test(`heartbeats API [${backend}]`, async (t) => {
    const { app, api } = await heartbeatApp(backend, { clock: fixedClock });
    try {
      const project = await newProject(api);

      await t.step("a period heartbeat answers 201 with its ping URL and deadline", async () => {
        const res = await api.post(heartbeatsPath(project), {
          name: "backup",
          period_seconds: 3600,
          grace_seconds: 300,
        });
        assert.equal(res.status, 201, res.text);
        const { ping_url, probe_id, ...rest } = res.body.data;
        assert.match(ping_url, /^http:\/\/service\.test\/ping\/[A-Za-z0-9_-]{32}$/);
        assert.match(probe_id, /^[0-9a-f]{16}$/);
        assert.deepEqual(rest, {
          project,
          name: "backup",
          period_seconds: 3600,
          schedule: null,
          timezone: null,
          grace_seconds: 300,
          max_duration_seconds: null,
          min_duration_seconds: null,
          state: "new",
          state_since: null,
          last_ping_at: null,
          last_ping_kind: null,
          last_duration_ms: null,
          next_deadline: new Date(T0 + 3_900_000).toISOString(),
          pings_total: 0,
          created_at: new Date(T0).toISOString(),
        });
        const read = await api.get(heartbeatsPath(project, "backup"));
        assert.equal(read.status, 200);
        assert.deepEqual(read.body.data, res.body.data);
      });

      await t.step(
        "a cron heartbeat's deadline is its schedule's next time plus grace",
        async () => {
          const hb = await newHeartbeat(api, project, {
            name: "nightly",
            schedule: "30 2 * * *",
            timezone: "Europe/Berlin",
            grace_seconds: 600,
          });
          // 02:30 in Berlin (summer time, +02:00) is 00:30 UTC the next day.
          assert.equal(hb.next_deadline, "2031-06-02T00:40:00.000Z");
          assert.equal(hb.timezone, "Europe/Berlin");
          const utc = await newHeartbeat(api, project, { name: "hourly", schedule: "0 * * * *" });
          assert.equal(utc.timezone, "UTC");
          assert.equal(utc.grace_seconds, 60);
          assert.equal(utc.next_deadline, "2031-06-01T13:01:00.000Z");
        },
      );

      await t.step("wrong timings are 422 naming the field", async () => {
        const cases: [object, string][] = [
          [{ name: "a1", period_seconds: 60, schedule: "* * * * *" }, "period_seconds"],
          [{ name: "a2" }, "period_seconds"],
          [{ name: "a3", schedule: "every day" }, "schedule"],
          [{ name: "a4", schedule: "0 3 * * *", timezone: "Mars/Olympus" }, "timezone"],
          [{ name: "a5", period_seconds: 5 }, "period_seconds"],
          [{ name: "a6", period_seconds: 60, timezone: "UTC" }, "timezone"],
          [{ name: "a7", schedule: "0 0 31 2 *" }, "schedule"],
          [{ name: "no spaces", period_seconds: 60 }, "name"],
        ];
        for (const [body, field] of cases) {
          const res = await api.post(heartbeatsPath(project), body);
          assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
          assert.equal(res.body.error.code, "validation_failed");
          assert.deepEqual(res.body.error.details.map((d: { path: string }) => d.path), [field]);
        }
      });

      await t.step("unknown project 404, a name taken 409", async () => {
        const missing = await api.post(heartbeatsPath("no-such-project"), {
          name: "x",
          period_seconds: 60,
        });
        assert.equal(missing.status, 404, missing.text);
        assert.equal(missing.body.error.code, "not_found");
        const again = await api.post(heartbeatsPath(project), {
          name: "backup",
          period_seconds: 60,
        });
        assert.equal(again.status, 409, again.text);
        assert.equal((await api.get(heartbeatsPath(project, "nope"))).status, 404);
        assert.equal((await api.get(heartbeatsPath("no-such-project"))).status, 404);
      });

      await t.step("the list pages by name", async () => {
        const all = await api.get(heartbeatsPath(project));
        assert.equal(all.status, 200);
        assert.deepEqual(all.body.data.map((h: { name: string }) => h.name), [
          "backup",
          "hourly",
          "nightly",
        ]);
        const first = await api.get(`${heartbeatsPath(project)}?limit=2`);
        assert.equal(first.body.meta.count, 2);
        const rest = await api.get(
          `${heartbeatsPath(project)}?limit=2&after=${first.body.meta.next_after}`,
        );
        assert.deepEqual(rest.body.data.map((h: { name: string }) => h.name), ["nightly"]);
        assert.equal(rest.body.meta.next_after, null);
      });

      await t.step("PATCH changes the timing; a schedule replaces a period", async () => {
        const res = await api.patch(heartbeatsPath(project, "backup"), {
          schedule: "0 4 * * *",
          timezone: "America/New_York",
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.data.period_seconds, null);
        assert.equal(res.body.data.schedule, "0 4 * * *");
        // 04:00 in New York (summer, -04:00) is 08:00 UTC; the grace stays 300 s.
        assert.equal(res.body.data.next_deadline, "2031-06-02T08:05:00.000Z");
        const back = await api.patch(heartbeatsPath(project, "backup"), { period_seconds: 120 });
        assert.equal(back.body.data.schedule, null);
        assert.equal(back.body.data.timezone, null);
        assert.equal(back.body.data.next_deadline, new Date(T0 + 420_000).toISOString());
        assert.equal((await api.patch(heartbeatsPath(project, "backup"), {})).status, 422);
        const bad = await api.patch(heartbeatsPath(project, "backup"), { schedule: "61 * * * *" });
        assert.equal(bad.status, 422);
        assert.equal(bad.body.error.details[0].path, "schedule");
        assert.equal(
          (await api.patch(heartbeatsPath(project, "nope"), { grace_seconds: 1 })).status,
          404,
        );
      });

      await t.step("the probes API neither lists nor reads a heartbeat's probe", async () => {
        const hb = (await api.get(heartbeatsPath(project, "backup"))).body.data;
        const probes = await api.get(`/api/v1/projects/${project}/probes`);
        assert.deepEqual(probes.body, { data: [], meta: { count: 0, next_after: null } });
        const all = await api.get("/api/v1/probes");
        assert.ok(all.body.data.every((p: { url: string }) => !p.url.startsWith("heartbeat:")));
        const path = `/api/v1/projects/${project}/probes/${hb.probe_id}`;
        assert.equal((await api.get(path)).status, 404);
        assert.equal((await api.patch(path, { label: "x" })).status, 404);
        assert.equal((await api.delete(path)).status, 404);
        assert.equal((await api.post(`${path}/run`)).status, 404);
        const made = await api.post(`/api/v1/projects/${project}/probes`, {
          url: "heartbeat://backup",
        });
        assert.equal(made.status, 422, made.text);
      });

      await t.step("a read-only key sees no ping token", async () => {
        const read = await api.get(heartbeatsPath(project, "backup"), { key: TEST_READ_KEY });
        assert.equal(read.status, 200, read.text);
        assert.equal(read.body.data.ping_url, `${BASE}/ping/****`);
        const list = await api.get(heartbeatsPath(project), { key: TEST_READ_KEY });
        for (const h of list.body.data) assert.equal(h.ping_url, `${BASE}/ping/****`);
        const write = await api.get(heartbeatsPath(project, "backup"));
        assert.ok(!list.text.includes(write.body.data.ping_url.split("/").at(-1)));
      });

      await t.step("DELETE removes the heartbeat; again it is 404", async () => {
        const res = await api.delete(heartbeatsPath(project, "hourly"));
        assert.equal(res.status, 204, res.text);
        assert.equal((await api.get(heartbeatsPath(project, "hourly"))).status, 404);
        assert.equal((await api.delete(heartbeatsPath(project, "hourly"))).status, 404);
      });
    } finally {
      await app.close();
    }
  });

  Deno.test(`heartbeats: ping URLs start with PUBLIC_URL when set [${backend}]`, async () => {
    const { app, api } = await heartbeatApp(backend, { publicUrl: "https://status.example.com/" });
    try {
      const project = await newProject(api);
      const hb = await newHeartbeat(api, project, { name: "job", period_seconds: 60 });
      assert.match(hb.ping_url, /^https:\/\/status\.example\.com\/ping\/[A-Za-z0-9_-]+$/);
    } finally {
      await app.close();
    }
  });
}
