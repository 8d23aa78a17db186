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
  Deno.test(`heartbeat pings through the HTTP edge [${backend}]`, async (t) => {
    const { fake, clock } = fakeClock(T0);
    const { app, api } = await heartbeatApp(backend, { clock });
    try {
      const project = await newProject(api);
      const hb = await newHeartbeat(api, project, {
        name: "job",
        period_seconds: 3600,
        grace_seconds: 60,
      });
      const read = async () => (await api.get(heartbeatsPath(project, "job"))).body.data;
      const ping = (method: string, suffix = "", raw?: string) =>
        api.call(method, pingPath(hb.ping_url, suffix), { key: null, raw });

      await t.step("GET, HEAD and POST are successes without a key", async () => {
        const get = await ping("GET");
        assert.equal(get.status, 200, get.text);
        assert.equal(get.text, "OK\n");
        const head = await ping("HEAD");
        assert.equal(head.status, 200);
        assert.equal(head.text, "");
        fake.tick(1000);
        const post = await ping("POST", "", "backup done: 3 files");
        assert.equal(post.status, 200);
        const now = await read();
        assert.equal(now.state, "up");
        assert.equal(now.pings_total, 3);
        assert.equal(now.last_ping_kind, "success");
        assert.equal(now.last_ping_at, new Date(T0 + 1000).toISOString());
        assert.equal(now.next_deadline, new Date(T0 + 1000 + 3_660_000).toISOString());
      });

      await t.step("start then success gives the run's duration", async () => {
        assert.equal((await ping("POST", "start")).status, 200);
        fake.tick(42_000);
        assert.equal((await ping("GET", "0")).status, 200);
        const now = await read();
        assert.equal(now.last_duration_ms, 42_000);
        assert.equal(now.state, "up");
        assert.equal((await ping("POST", "log", "a line")).status, 200);
        assert.equal((await read()).state, "up");
      });

      await t.step("an up heartbeat's last run is its latest success", async () => {
        // The `/0` above, a success of an up heartbeat (stored without settling).
        const status = (await api.get(`/api/v1/projects/${project}/status`)).body.data;
        const row = status.find((p: { probe_id: string }) => p.probe_id === hb.probe_id);
        assert.equal(row.last_run_at, new Date(fake.now).toISOString());
        assert.equal(row.last_outcome, "up");
      });

      await t.step("fail and a non-zero exit code are down at once, with the body", async () => {
        fake.tick(1000);
        assert.equal((await ping("POST", "fail", "disk full on /var")).status, 200);
        const down = await read();
        assert.equal(down.state, "down");
        const [open] = await incidentsOf(api, project, hb.probe_id);
        assert.equal(open.state, "open");
        assert.match(open.last_error!, /the job reported a failure: disk full on \/var/);
        fake.tick(1000);
        assert.equal((await ping("GET")).status, 200);
        assert.equal((await read()).state, "up");
        assert.equal((await incidentsOf(api, project, hb.probe_id))[0].state, "resolved");
        fake.tick(1000);
        assert.equal((await ping("POST", "3", "rsync: connection refused")).status, 200);
        assert.equal((await read()).state, "down");
        const [again] = await incidentsOf(api, project, hb.probe_id);
        assert.match(again.last_error!, /exited with code 3: rsync: connection refused/);
        fake.tick(1000);
        assert.equal((await ping("GET", "0")).status, 200);
        assert.equal((await read()).state, "up");
      });

      await t.step("the pings are listed, the latest first, with bodies", async () => {
        const res = await api.get(`${heartbeatsPath(project, "job")}/pings`);
        assert.equal(res.status, 200, res.text);
        const kinds = res.body.data.map((p: { kind: string; exit_code: number | null }) =>
          p.kind === "exit" ? `exit ${p.exit_code}` : p.kind
        );
        assert.deepEqual(kinds, [
          "exit 0",
          "exit 3",
          "success",
          "fail",
          "log",
          "exit 0",
          "start",
          "success",
          "success",
          "success",
        ]);
        const fail = res.body.data[3];
        assert.equal(fail.body, "disk full on /var");
        assert.equal(fail.method, "POST");
        assert.equal(fail.body_bytes, 17);
        assert.equal(res.body.data[0].n, 10);
        assert.equal((await read()).pings_total, 10);
      });

      await t.step("a body is kept to 10 KiB; past 100 KiB it is refused", async () => {
        const long = "x".repeat(50_000);
        assert.equal((await ping("POST", "log", long)).status, 200);
        const [last] = (await api.get(`${heartbeatsPath(project, "job")}/pings?limit=1`)).body
          .data;
        assert.equal(last.body.length, 10 * 1024);
        assert.equal(last.body_bytes, 50_000);
        const huge = await ping("POST", "log", "y".repeat(100 * 1024 + 1));
        assert.equal(huge.status, 413);
        // The refusal names the ping's bound, not the API's 1 MiB.
        assert.equal(huge.body.error.message, "The request body is larger than 100 KiB");
      });

      await t.step("a body is kept byte for byte, quotes and backslashes too", async () => {
        // The embedded database gets a batch's values as literals of a prepared statement.
        const text = `it's \\'; drop table heartbeats; -- \\x00 "$$" \\\\n é ✓`;
        assert.equal((await ping("POST", "log", text)).status, 200);
        const [last] = (await api.get(`${heartbeatsPath(project, "job")}/pings?limit=1`)).body
          .data;
        assert.equal(last.body, text);
        assert.equal(last.body_bytes, new TextEncoder().encode(text).length);
      });

      await t.step("any path naming no heartbeat is 404 with the same bytes", async () => {
        const token = new URL(hb.ping_url).pathname.split("/")[2];
        const other = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
        const answers = await Promise.all([
          api.call("GET", `/ping/${other}`, { key: null }),
          api.call("POST", `/ping/${other}/fail`, { key: null }),
          api.call("GET", `/ping/${token}/256`, { key: null }),
          api.call("GET", `/ping/${token}/nope`, { key: null }),
          api.call("GET", `/ping/${token}/0/1`, { key: null }),
          api.call("GET", `/ping/short`, { key: null }),
          api.call("GET", `/no-such-path`, { key: null }),
        ]);
        for (const a of answers) {
          assert.equal(a.status, 404);
          assert.equal(a.text, answers.at(-1)!.text);
          assert.equal(a.headers.get("content-type"), answers.at(-1)!.headers.get("content-type"));
        }
        assert.equal((await read()).pings_total, 12);
      });
    } finally {
      await app.close();
    }
  });
}
