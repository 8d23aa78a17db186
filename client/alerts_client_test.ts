/**
 * The typed client's alerting calls (incidents, alert policy, maintenance windows, notification
 * targets, run-now) against a real app, in-process: the client's fetch hands each request to the
 * app's handler. Every case runs on PGlite and, with TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from "node:assert/strict";
import { MASKED_WEBHOOK_SECRET } from "@probe/shared";
import { apiSuite, uniqueName } from "../server/testing/app.ts";
import { startTarget } from "../server/testing/target_server.ts";

import { clientOf, failure, rejects } from "./testing.ts";

const CHAT_SECRET = "T0000/B0000/client-test-credential";

apiSuite("typed client: alerting", (test) => {
  test("each call reaches its own procedure", async (t) => {
    const seen: string[] = [];
    const client = clientOf(t, seen);
    const project = uniqueName();
    await client.projects.create({ project });
    seen.length = 0;
    await client.alerts.get();
    await client.alerts.getProject({ project });
    await client.incidents.list({ project });
    await client.maintenance.list({ project });
    await client.targets.list();
    await client.targets.get({ name: "log" });
    assert.deepEqual(seen, [
      "GET /trpc/alerts.get",
      "GET /trpc/alerts.getProject",
      "GET /trpc/incidents.list",
      "GET /trpc/maintenance.list",
      "GET /trpc/targets.list",
      "GET /trpc/targets.get",
    ]);
    seen.length = 0;
    await client.targets.test({ name: "log" });
    await failure(() => client.incidents.acknowledge({ id: "1" }));
    await failure(() => client.probes.run({ project, probeId: "0000000000000000" }));
    assert.deepEqual(seen, [
      "POST /trpc/targets.test",
      "POST /trpc/incidents.acknowledge",
      "POST /trpc/probes.run",
    ]);
  });

  test("alerts: the global policy, read and changed", async (t) => {
    const client = clientOf(t);
    const before = await client.alerts.get();
    assert.deepEqual(before, {
      data: {
        enabled: true,
        targets: ["log"],
        failure_threshold: 3,
        success_threshold: 2,
        reminder_minutes: 0,
        notify_degraded: false,
        notify_recovered: true,
        location_quorum: "majority",
        escalation: [],
        flap_changes: 0,
        flap_minutes: 30,
      },
    });
    const changed = await client.alerts.update({ failure_threshold: 4, reminder_minutes: 30 });
    assert.deepEqual(changed.data, { ...before.data, failure_threshold: 4, reminder_minutes: 30 });
    assert.deepEqual((await client.alerts.get()).data, changed.data);

    await rejects(() => client.alerts.update({}), 422, "validation_failed");
    await rejects(
      () => client.alerts.update({ targets: ["log", uniqueName("ghost")] }),
      422,
      "validation_failed",
      "targets.1",
    );
    await rejects(
      () => client.alerts.update({ reminder_minutes: 3 }),
      422,
      "validation_failed",
      "reminder_minutes",
    );
    await client.alerts.update({ failure_threshold: 3, reminder_minutes: 0 });
    assert.deepEqual(
      (await client.alerts.get()).data,
      before.data,
      "refused calls changed nothing",
    );
  });

  test("alerts: a project's overrides, null inherits again", async (t) => {
    const client = clientOf(t);
    const project = uniqueName();
    await client.projects.create({ project });
    const global = (await client.alerts.get()).data;
    const fresh = await client.alerts.getProject({ project });
    assert.equal(fresh.data.project, project);
    assert.ok(Object.values(fresh.data.overrides).every((v) => v === null));
    assert.deepEqual(fresh.data.effective, global);

    const set = await client.alerts.updateProject({
      project,
      failure_threshold: 1,
      notify_degraded: true,
    });
    assert.equal(set.data.overrides.failure_threshold, 1);
    assert.equal(set.data.effective.failure_threshold, 1);
    assert.equal(set.data.effective.notify_degraded, true);
    assert.equal(set.data.effective.success_threshold, global.success_threshold);

    const back = await client.alerts.updateProject({ project, notify_degraded: null });
    assert.equal(back.data.overrides.notify_degraded, null);
    assert.equal(back.data.effective.notify_degraded, global.notify_degraded);
    assert.equal(back.data.overrides.failure_threshold, 1, "fields not sent stay");

    await rejects(
      () => client.alerts.getProject({ project: uniqueName("missing") }),
      404,
      "not_found",
    );
    await rejects(
      () => client.alerts.updateProject({ project: uniqueName("missing"), enabled: false }),
      404,
      "not_found",
    );
    await rejects(
      () => client.alerts.updateProject({ project, success_threshold: 11 }),
      422,
      "validation_failed",
      "success_threshold",
    );
  });

  test("maintenance: add, list by state, delete", async (t) => {
    const client = clientOf(t);
    const project = uniqueName();
    await client.projects.create({ project });
    const now = Date.now();
    const created = await client.maintenance.create({
      project,
      starts_at: new Date(now - 60_000).toISOString(),
      ends_at: new Date(now + 3_600_000).toISOString(),
      reason: "Database upgrade",
    });
    assert.equal(created.data.project, project);
    assert.equal(created.data.state, "active");
    assert.equal(created.data.reason, "Database upgrade");
    const later = await client.maintenance.create({
      project,
      starts_at: "2031-03-01T10:00:00+02:00",
      ends_at: "2031-03-01T12:00:00+02:00",
    });
    assert.equal(later.data.starts_at, "2031-03-01T08:00:00.000Z");
    assert.equal(later.data.reason, null);

    const all = await client.maintenance.list({ project });
    assert.deepEqual(all.meta, { count: 2 });
    assert.deepEqual(all.data.map((w) => w.id), [created.data.id, later.data.id]);
    const upcoming = await client.maintenance.list({ project, state: "upcoming" });
    assert.deepEqual(upcoming.data.map((w) => w.id), [later.data.id]);

    assert.equal(await client.maintenance.delete({ project, id: later.data.id }), undefined);
    await rejects(
      () => client.maintenance.delete({ project, id: later.data.id }),
      404,
      "not_found",
    );
    assert.equal((await client.maintenance.list({ project })).meta.count, 1);

    await rejects(
      () =>
        client.maintenance.create({
          project,
          starts_at: "2031-03-01T12:00:00Z",
          ends_at: "2031-03-01T10:00:00Z",
        }),
      422,
      "validation_failed",
      "ends_at",
    );
    await rejects(
      () =>
        client.maintenance.create({
          project: uniqueName("missing"),
          starts_at: "2031-03-01T10:00:00Z",
          ends_at: "2031-03-01T12:00:00Z",
        }),
      404,
      "not_found",
    );
    await rejects(
      () => client.maintenance.list({ project: uniqueName("missing") }),
      404,
      "not_found",
    );
  });

  test("targets: create, read masked, update, test, delete", async (t) => {
    const client = clientOf(t);
    const hook = uniqueName("hook");
    const created = await client.targets.create({
      name: hook,
      kind: "webhook",
      url: "https://hooks.example.com/alerts",
    });
    assert.equal(created.data.kind, "webhook");
    const generated = created.data.secret;
    assert.match(generated ?? "", /^whsec_[A-Za-z0-9+/]+=*$/, "the generated key, this once");

    const read = await client.targets.get({ name: hook });
    assert.equal(read.data.secret, MASKED_WEBHOOK_SECRET);
    assert.equal(read.data.url, "https://hooks.example.com/alerts");

    const slack = uniqueName("slack");
    const chat = await client.targets.create({
      name: slack,
      kind: "slack",
      url: `https://hooks.slack.com/services/${CHAT_SECRET}`,
    });
    assert.equal(chat.data.url, "https://hooks.slack.com/…");
    assert.equal(chat.data.secret, null);

    const mail = uniqueName("mail");
    await client.targets.create({ name: mail, kind: "mail", recipients: ["a@example.com"] });
    const updated = await client.targets.update({ name: mail, recipients: ["b@example.com"] });
    assert.deepEqual(updated.data.recipients, ["b@example.com"]);

    const listed = await client.targets.list();
    assert.equal(listed.data[0].name, "log");
    assert.equal(listed.meta.count, listed.data.length);
    for (const name of [hook, slack, mail]) assert.ok(listed.data.some((d) => d.name === name));
    const everything = JSON.stringify([listed, read, chat, updated]);
    assert.ok(!everything.includes(CHAT_SECRET), "a chat URL's credential is never answered");
    assert.ok(!everything.includes(generated!), "the generated key is answered once only");

    const tested = await client.targets.test({ name: "log" });
    assert.deepEqual(tested.data, { target: "log", outcome: "delivered", attempts: 1 });

    await rejects(
      () => client.targets.create({ name: hook, kind: "mail", recipients: ["c@example.com"] }),
      409,
      "conflict",
    );
    await rejects(
      () => client.targets.update({ name: "log", url: "https://x.example/" }),
      409,
      "conflict",
    );
    await rejects(
      () => client.targets.create({ name: uniqueName("s"), kind: "slack" }),
      422,
      "validation_failed",
      "url",
    );
    await rejects(
      () => client.targets.update({ name: hook, recipients: ["c@example.com"] }),
      422,
      "validation_failed",
      "recipients",
    );

    // A target the policy names cannot go.
    const project = uniqueName();
    await client.projects.create({ project });
    await client.alerts.updateProject({ project, targets: [hook] });
    await rejects(() => client.targets.delete({ name: hook }), 409, "conflict");
    await client.alerts.updateProject({ project, targets: null });
    assert.equal(await client.targets.delete({ name: hook }), undefined);
    await rejects(() => client.targets.get({ name: hook }), 404, "not_found");
    await rejects(() => client.targets.test({ name: hook }), 404, "not_found");
    await rejects(() => client.targets.delete({ name: hook }), 404, "not_found");
  });

  test("probes: label and expect, written and read", async (t) => {
    const client = clientOf(t);
    const project = uniqueName();
    await client.projects.create({ project });
    const expect = {
      status: ["2xx" as const, 301],
      json: [{ path: "/status", op: "eq" as const, value: "UP" }],
    };
    const { data: written } = await client.probes.create({
      project,
      url: "https://shop.example.com/health",
      label: "Shop health",
      expect,
    });
    const { data: probe } = await client.probes.get({ project, probeId: written.probe_id });
    assert.equal(probe.label, "Shop health");
    assert.deepEqual(probe.expect, expect);
    assert.equal(probe.state, "unknown");
    assert.equal(probe.state_since, null);

    const changed = await client.probes.update({
      project,
      probeId: written.probe_id,
      expect: { certificate_days: 14 },
      label: null,
    });
    assert.equal(changed.data.probe_id, written.probe_id, "expect never changes the id");
    const after = (await client.probes.get({ project, probeId: written.probe_id })).data;
    assert.deepEqual([after.label, after.expect], [null, { certificate_days: 14 }]);

    await rejects(
      () =>
        client.probes.create({
          project,
          url: "http://shop.example.com/",
          expect: { certificate_days: 14 },
        }),
      422,
      "validation_failed",
      "expect.certificate_days",
    );
    await rejects(
      () =>
        client.probes.update({
          project,
          probeId: written.probe_id,
          // @ts-expect-error an operator the service does not know
          expect: { json: [{ path: "/a", op: "matches", value: "x" }] },
        }),
      422,
      "validation_failed",
      "expect.json.0.op",
    );
  });

  test("run now, then the incident it opens: list, get, acknowledge", async (t) => {
    const client = clientOf(t);
    const target = await startTarget();
    try {
      const project = uniqueName();
      await client.projects.create({ project });
      await client.alerts.updateProject({ project, failure_threshold: 1 });
      const { data: probe } = await client.probes.create({
        project,
        url: `${target.origin}/health`,
        label: "Local health",
        expect: { json: [{ path: "/status", op: "eq", value: "UP" }] },
      });
      const ref = { project, probeId: probe.probe_id };

      const { data: passed } = await client.probes.run(ref);
      assert.deepEqual(
        [passed.trigger, passed.outcome, passed.http_status, passed.failed_checks],
        ["manual", "up", 200, []],
      );
      assert.equal((await client.probes.get(ref)).data.state, "up");

      target.setHealth(200, { status: "DOWN" });
      const { data: failed } = await client.probes.run(ref);
      assert.equal(failed.outcome, "down");
      assert.equal(failed.in_maintenance, false);
      assert.deepEqual(failed.failed_checks?.map((c) => [c.check, c.seen]), [["json.0", '"DOWN"']]);
      assert.deepEqual((await client.results.list(ref)).data, [failed, passed], "as recorded");
      assert.equal((await client.probes.get(ref)).data.state, "down");

      const listed = await client.incidents.list({ project });
      assert.equal(listed.meta.count, 1);
      assert.equal(listed.meta.next_before, null);
      const [incident] = listed.data;
      assert.equal(incident.state, "open");
      assert.equal(incident.probe_id, probe.probe_id);
      assert.equal(incident.label, "Local health");
      assert.equal(incident.runs_failed, 1);
      assert.equal(incident.acknowledged_at, null);
      assert.deepEqual((await client.incidents.list({ project, state: "resolved" })).data, []);

      const { data: detail } = await client.incidents.get({ id: incident.id });
      assert.deepEqual(detail.notifications.map((n) => [n.type, n.target]), [
        ["probe.down", "log"],
      ]);

      const acked = await client.incidents.acknowledge({ id: incident.id });
      assert.equal(acked.data.id, incident.id);
      assert.equal(typeof acked.data.acknowledged_at, "string");

      // Disabling the project resolves the incident; a resolved one cannot be acknowledged.
      await client.projects.update({ project, status: "disabled" });
      const [resolved] = (await client.incidents.list({ project, state: "resolved" })).data;
      assert.equal(resolved.resolution, "disabled");
      await rejects(() => client.incidents.acknowledge({ id: incident.id }), 409, "conflict");
      await rejects(() => client.probes.run(ref), 409, "conflict");

      await rejects(() => client.incidents.get({ id: "999999999" }), 404, "not_found");
      await rejects(() => client.incidents.acknowledge({ id: "999999999" }), 404, "not_found");
      await rejects(
        () => client.probes.run({ project, probeId: "0000000000000000" }),
        404,
        "not_found",
      );
      await rejects(() => client.incidents.list({ limit: 0 }), 422, "validation_failed", "limit");
      await rejects(
        // @ts-expect-error a state the service does not know
        () => client.incidents.list({ state: "closed" }),
        422,
        "validation_failed",
        "state",
      );
    } finally {
      await target.close();
    }
  });

  test("incidents come page by page through limit and before", async (t) => {
    const client = clientOf(t);
    const project = uniqueName();
    await client.projects.create({ project });
    await client.alerts.updateProject({ project, failure_threshold: 1 });
    const ids = [];
    // Nothing listens on port 9 of loopback: each run fails with "connection refused".
    for (const path of ["a", "b", "c"]) {
      const { data } = await client.probes.create({ project, url: `http://127.0.0.1:9/${path}` });
      await client.probes.run({ project, probeId: data.probe_id });
      ids.push(data.probe_id);
    }
    const first = await client.incidents.list({ project, limit: 2 });
    assert.equal(first.meta.count, 2);
    assert.notEqual(first.meta.next_before, null);
    const second = await client.incidents.list({
      project,
      limit: 2,
      before: first.meta.next_before!,
    });
    assert.equal(second.meta.count, 1);
    assert.equal(second.meta.next_before, null);
    assert.deepEqual(
      [...first.data, ...second.data].map((i) => i.probe_id),
      ids.toReversed(),
      "newest first",
    );
  });
});
