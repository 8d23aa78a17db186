/**
 * Incidents and run-now through the REST API, with real runs of a local target that goes down
 * and comes back (`/health`), judged by the probe's assertions.
 */
import assert from "node:assert/strict";
import { apiSuite, type TestClient, uniqueName } from "../testing/app.ts";
import { startTarget, type Target } from "../testing/target_server.ts";

async function probeOn(api: TestClient, target: Target, expect?: unknown) {
  const project = uniqueName();
  assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
  const created = await api.post(`/api/v1/projects/${project}/probes`, {
    url: `${target.origin}/health`,
    label: "Shop health",
    ...(expect !== undefined && { expect }),
  });
  assert.equal(created.status, 201, created.text);
  const path = `/api/v1/projects/${project}/probes/${created.body.data.probe_id}`;
  return { project, path };
}

apiSuite("incidents and run-now", (test) => {
  test("a probe's incidents: by probe_id, also from before its id changed", async ({ api }) => {
    const target = await startTarget();
    try {
      const { project, path: first } = await probeOn(api, target);
      const other = await api.post(`/api/v1/projects/${project}/probes`, {
        url: `${target.origin}/health?other=1`,
      });
      const second = `/api/v1/projects/${project}/probes/${other.body.data.probe_id}`;
      await api.patch(`/api/v1/projects/${project}/alerts`, { failure_threshold: 1 });
      target.setHealth(503, { status: "DOWN" });
      await api.post(`${first}/run`);
      await api.post(`${second}/run`);
      // A new URL gives the first probe a new id (its open incident ends as `changed`); it fails
      // again under that id.
      const moved = await api.patch(first, { url: `${target.origin}/health?moved=1` });
      assert.equal(moved.status, 200, moved.text);
      const movedId = moved.body.data.probe_id;
      await api.post(`/api/v1/projects/${project}/probes/${movedId}/run`);

      const of = async (probeId: string) => {
        const answer = await api.get(`/api/v1/incidents?project=${project}&probe_id=${probeId}`);
        assert.equal(answer.status, 200, answer.text);
        return answer.body.data.map((i: { probe_id: string; resolution: string | null }) => [
          i.probe_id,
          i.resolution,
        ]);
      };
      const firstId = first.slice(first.lastIndexOf("/") + 1);
      assert.deepEqual(await of(movedId), [[movedId, null], [firstId, "changed"]]);
      assert.deepEqual(await of(other.body.data.probe_id), [[other.body.data.probe_id, null]]);
      assert.equal((await api.get(`/api/v1/incidents?project=${project}`)).body.meta.count, 3);

      const alone = await api.get(`/api/v1/incidents?probe_id=${movedId}`);
      assert.equal(alone.status, 422);
      assert.deepEqual(alone.body.error.details, [
        { path: "project", message: "is required with probe_id" },
      ]);
      const unknown = await api.get(`/api/v1/incidents?project=${project}&probe_id=${firstId}`);
      assert.equal(unknown.status, 404, "the old id names no probe now");
      assert.equal(unknown.body.error.message, "Probe not found");
    } finally {
      await target.close();
    }
  });

  test("run-now answers with the verdict and records it as a manual run", async ({ api }) => {
    const target = await startTarget();
    try {
      const { path } = await probeOn(api, target, {
        json: [{ path: "/status", op: "eq", value: "UP" }],
      });
      const up = await api.post(`${path}/run`);
      assert.equal(up.status, 200, up.text);
      assert.equal(up.body.data.outcome, "up");
      assert.equal(up.body.data.trigger, "manual");
      assert.deepEqual(up.body.data.failed_checks, []);

      target.setHealth(200, { status: "DOWN" });
      const down = await api.post(`${path}/run`, {});
      assert.equal(down.body.data.outcome, "down");
      assert.equal(down.body.data.error, "assertion failed: json.0");
      assert.equal(down.body.data.failed_checks[0].check, "json.0");
      assert.match(down.body.data.failed_checks[0].seen, /DOWN/);

      const results = await api.get(`${path}/results`);
      assert.deepEqual(
        results.body.data.map((r: { outcome: string; trigger: string }) => [r.outcome, r.trigger]),
        [["down", "manual"], ["up", "manual"]],
      );
      const probe = await api.get(path);
      assert.equal(probe.body.data.state, "up", "one failing run of three is not yet down");

      // Run-now takes no input: a body with fields is refused and runs nothing.
      const extra = await api.post(`${path}/run`, { now: true });
      assert.equal(extra.status, 422);
      assert.equal((await api.get(`${path}/results`)).body.meta.count, 2);
      const missing = await api.post(`${path.replace(/[^/]+$/, "nope")}/run`);
      assert.equal(missing.status, 404);
    } finally {
      await target.close();
    }
  });

  test("one manual run per probe at a time: a second while the first runs is a 409", async ({ api }) => {
    const target = await startTarget();
    try {
      const project = uniqueName();
      await api.post("/api/v1/projects", { project });
      const created = await api.post(`/api/v1/projects/${project}/probes`, {
        url: `${target.origin}/slow?ms=400`,
      });
      const path = `/api/v1/projects/${project}/probes/${created.body.data.probe_id}`;
      const first = api.post(`${path}/run`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const second = await api.post(`${path}/run`);
      assert.equal(second.status, 409);
      assert.equal(second.body.error.code, "conflict");
      assert.equal((await first).status, 200);
      // Once the first is recorded, the probe can be run again.
      assert.equal((await api.post(`${path}/run`)).status, 200);
    } finally {
      await target.close();
    }
  });

  test("a probe going down opens one incident; acknowledging stops reminders; recovery resolves it", async ({ api }) => {
    const target = await startTarget();
    try {
      const { project, path } = await probeOn(api, target);
      const policy = await api.patch(`/api/v1/projects/${project}/alerts`, {
        failure_threshold: 2,
        success_threshold: 1,
        reminder_minutes: 5,
      });
      assert.equal(policy.status, 200, policy.text);
      target.setHealth(503, { status: "DOWN" });
      await api.post(`${path}/run`);
      const query = `/api/v1/incidents?project=${project}`;
      assert.deepEqual((await api.get(query)).body.data, []);
      await api.post(`${path}/run`);
      const [incident] = (await api.get(query)).body.data;
      assert.equal(incident.state, "open");
      assert.equal(incident.label, "Shop health");
      assert.equal(incident.cause, "answered HTTP 503, expected a status below 400");
      assert.equal(incident.last_error, "HTTP 503");
      assert.equal(incident.runs_failed, 2);
      assert.equal((await api.get(path)).body.data.state, "down");

      const detail = await api.get(`/api/v1/incidents/${incident.id}`);
      assert.deepEqual(
        detail.body.data.notifications.map((n: { type: string; target: string }) => [
          n.type,
          n.target,
        ]),
        [["probe.down", "log"]],
      );
      const refused = await api.post(`/api/v1/incidents/${incident.id}/acknowledge`, { x: 1 });
      assert.equal(refused.status, 422);
      const acked = await api.post(`/api/v1/incidents/${incident.id}/acknowledge`);
      assert.equal(acked.status, 200);
      assert.notEqual(acked.body.data.acknowledged_at, null);
      const again = await api.post(`/api/v1/incidents/${incident.id}/acknowledge`, {});
      assert.equal(again.body.data.acknowledged_at, acked.body.data.acknowledged_at);

      await api.post(`${path}/run`);
      assert.equal((await api.get(query)).body.data[0].runs_failed, 3);

      target.setHealth(200, { status: "UP" });
      await api.post(`${path}/run`);
      const [resolved] = (await api.get(`${query}&state=resolved`)).body.data;
      assert.equal(resolved.id, incident.id);
      assert.equal(resolved.resolution, "recovered");
      assert.equal(typeof resolved.duration_seconds, "number");
      assert.equal((await api.get(path)).body.data.state, "up");
      const types = (await api.get(`/api/v1/incidents/${incident.id}`)).body.data.notifications
        .map((n: { type: string }) => n.type);
      // Acknowledged twice, told once.
      assert.deepEqual(types, ["probe.down", "probe.acknowledged", "probe.recovered"]);
      const late = await api.post(`/api/v1/incidents/${incident.id}/acknowledge`);
      assert.equal(late.status, 409);
    } finally {
      await target.close();
    }
  });

  test("changing a probe's URL resets its state and resolves its incident as changed", async ({ api }) => {
    const target = await startTarget();
    try {
      const { project, path } = await probeOn(api, target);
      await api.patch(`/api/v1/projects/${project}/alerts`, { failure_threshold: 1 });
      target.setHealth(500, {});
      await api.post(`${path}/run`);
      assert.equal((await api.get(path)).body.data.state, "down");
      // Changing what is expected keeps the state.
      await api.patch(path, { expect: { status: ["2xx"] }, latency: 500 });
      assert.equal((await api.get(path)).body.data.state, "down");

      const moved = await api.patch(path, { url: `${target.origin}/ok` });
      assert.equal(moved.status, 200);
      const probe = await api.get(`/api/v1/projects/${project}/probes/${moved.body.data.probe_id}`);
      assert.equal(probe.body.data.state, "unknown");
      const [incident] = (await api.get(`/api/v1/incidents?project=${project}`)).body.data;
      assert.equal(incident.resolution, "changed");
      const sent = (await api.get(`/api/v1/incidents/${incident.id}`)).body.data.notifications;
      assert.deepEqual(sent.map((n: { type: string }) => n.type), ["probe.down"]);
    } finally {
      await target.close();
    }
  });

  test("failures counted before a URL change do not count after it", async ({ api }) => {
    const target = await startTarget();
    try {
      const { path } = await probeOn(api, target);
      target.setHealth(500, {});
      await api.post(`${path}/run`);
      await api.post(`${path}/run`);
      assert.equal((await api.get(path)).body.data.state, "unknown", "2 of 3 failures");
      const moved = await api.patch(path, { url: `${target.origin}/health?v=2` });
      const next = path.replace(/[^/]+$/, moved.body.data.probe_id);
      await api.post(`${next}/run`);
      const probe = (await api.get(next)).body.data;
      assert.equal(probe.state, "unknown", "one failure of the new URL, not three");
      assert.equal(probe.state_since, null, "it never left unknown");
    } finally {
      await target.close();
    }
  });

  test("disabling a project resolves its incidents without alerts; deleting keeps them in the archive", async ({ api, app }) => {
    const target = await startTarget();
    try {
      const { project, path } = await probeOn(api, target);
      await api.patch(`/api/v1/projects/${project}/alerts`, { failure_threshold: 1 });
      target.setHealth(500, {});
      await api.post(`${path}/run`);
      await api.patch(`/api/v1/projects/${project}`, { status: "disabled" });
      const [incident] = (await api.get(`/api/v1/incidents?project=${project}`)).body.data;
      assert.equal(incident.resolution, "disabled");
      assert.equal((await api.get(path)).body.data.state, "unknown");
      const disabled = await api.post(`${path}/run`);
      assert.equal(disabled.status, 409, "a disabled project is not checked");

      await api.patch(`/api/v1/projects/${project}`, { status: "enabled" });
      await api.post(`${path}/run`);
      const open = (await api.get(`/api/v1/incidents?project=${project}&state=open`)).body.data;
      assert.equal(open.length, 1);
      assert.equal((await api.delete(`/api/v1/projects/${project}`)).status, 200);
      const all = (await api.get(`/api/v1/incidents?project=${project}`)).body.data;
      assert.deepEqual(all.map((i: { resolution: string }) => i.resolution), [
        "deleted",
        "disabled",
      ]);
      const archive = await app.database.db.selectFrom("archived_projects").select("snapshot")
        .where("project", "=", project).executeTakeFirstOrThrow();
      const archived = (archive.snapshot as { incidents: { resolution: string }[] }).incidents;
      assert.deepEqual(archived.map((i) => i.resolution), ["disabled", "deleted"]);
    } finally {
      await target.close();
    }
  });

  test("incidents are listed newest first, a page at a time; bad queries are 422, unknown ids 404", async ({ api }) => {
    const target = await startTarget();
    try {
      const { project, path } = await probeOn(api, target);
      await api.patch(`/api/v1/projects/${project}/alerts`, {
        failure_threshold: 1,
        success_threshold: 1,
      });
      for (let i = 0; i < 3; i++) {
        target.setHealth(500, {});
        await api.post(`${path}/run`);
        target.setHealth(200, {});
        await api.post(`${path}/run`);
      }
      const all = (await api.get(`/api/v1/incidents?project=${project}`)).body.data;
      assert.equal(all.length, 3);
      const first = await api.get(`/api/v1/incidents?project=${project}&limit=2`);
      assert.deepEqual(first.body.data, all.slice(0, 2));
      const next = await api.get(
        `/api/v1/incidents?project=${project}&limit=2&before=${first.body.meta.next_before}`,
      );
      assert.deepEqual(next.body.data, all.slice(2));
      assert.equal(next.body.meta.next_before, null);
      for (const query of ["limit=0", "limit=501", "state=closed", "before=abc"]) {
        assert.equal((await api.get(`/api/v1/incidents?${query}`)).status, 422, query);
      }
      for (const id of ["0", "abc", "99999999999"]) {
        assert.equal((await api.get(`/api/v1/incidents/${id}`)).status, 404, id);
      }
    } finally {
      await target.close();
    }
  });
});
