/**
 * The typed client's heartbeat calls against a real app in-process (the client's fetch hands
 * each request to the app's handler), on PGlite and, with TEST_DATABASE_URL, on PostgreSQL: made,
 * listed, read, changed, pinged (with curl's plain HTTP, as a job would), deleted; a read-only
 * key sees no ping token.
 */
import assert from "node:assert/strict";
import { backends, BASE, TEST_READ_KEY, uniqueName } from "../server/testing/app.ts";
import { heartbeatApp } from "../server/testing/heartbeats.ts";
import { createProbeClient } from "./mod.ts";
import { clientOf, rejects } from "./testing.ts";

for (const backend of backends()) {
  Deno.test(`typed client: heartbeats [${backend}]`, async () => {
    const { app } = await heartbeatApp(backend, { publicUrl: "https://probes.example.com" });
    const seen: string[] = [];
    const client = clientOf({ app }, seen);
    const reader = createProbeClient({
      baseUrl: BASE,
      apiKey: TEST_READ_KEY,
      fetch: (input, init) => app.handler(new Request(input, init)),
    });
    try {
      const project = uniqueName();
      await client.projects.create({ project });
      const made = await client.heartbeats.create({
        project,
        name: "backup",
        schedule: "30 2 * * *",
        timezone: "Europe/Berlin",
        grace_seconds: 600,
      });
      const h = made.data;
      assert.equal(h.name, "backup");
      assert.equal(h.state, "new");
      assert.equal(h.period_seconds, null);
      assert.equal(h.timezone, "Europe/Berlin");
      assert.match(h.ping_url, /^https:\/\/probes\.example\.com\/ping\/[A-Za-z0-9_-]{20,}$/);
      assert.ok(h.next_deadline !== null, "a deadline from its creation");

      await client.heartbeats.create({ project, name: "queue", period_seconds: 60 });
      const listed = await client.heartbeats.list({ project });
      assert.deepEqual(listed.data.map((x) => x.name), ["backup", "queue"]);
      const page = await client.heartbeats.list({ project, limit: 1 });
      assert.deepEqual(page.data.map((x) => x.name), ["backup"]);
      assert.ok(page.meta.next_after, "a cursor to the next page");

      // A read-only key reads it all but the token.
      const read = await reader.heartbeats.get({ project, name: "backup" });
      assert.equal(read.data.ping_url, "https://probes.example.com/ping/****");
      const token = h.ping_url.split("/").at(-1)!;
      assert.ok(!JSON.stringify(await reader.heartbeats.list({ project })).includes(token));
      await rejects(
        () => reader.heartbeats.update({ project, name: "backup", grace_seconds: 1 }),
        403,
        "forbidden",
      );

      const changed = await client.heartbeats.update({
        project,
        name: "backup",
        period_seconds: 3600,
      });
      assert.equal(changed.data.schedule, null);
      assert.equal(changed.data.period_seconds, 3600);
      assert.equal(changed.data.ping_url, h.ping_url, "a change keeps the ping URL");

      // A job pings with plain HTTP; the client reads what it sent.
      const ping = await app.handler(
        new Request(`${BASE}/ping/${token}/0`, { method: "POST", body: "dumped 3 tables" }),
      );
      assert.equal(ping.status, 200, await ping.text());
      const pings = await client.heartbeats.pings({ project, name: "backup" });
      assert.equal(pings.meta.count, 1);
      assert.equal(pings.data[0].kind, "exit");
      assert.equal(pings.data[0].exit_code, 0);
      assert.equal(pings.data[0].body, "dumped 3 tables");
      const after = await client.heartbeats.get({ project, name: "backup" });
      assert.equal(after.data.pings_total, 1);
      assert.notEqual(after.data.last_ping_at, null);

      await rejects(
        () => client.heartbeats.create({ project, name: "backup", period_seconds: 60 }),
        409,
        "conflict",
      );
      await rejects(
        () =>
          client.heartbeats.create({
            project,
            name: "both",
            period_seconds: 60,
            schedule: "* * * * *",
          }),
        422,
        "validation_failed",
        "period_seconds",
      );
      await rejects(
        () => client.heartbeats.create({ project, name: "odd", schedule: "61 * * * *" }),
        422,
        "validation_failed",
        "schedule",
      );
      await rejects(
        () =>
          client.heartbeats.create({ project: uniqueName("gone"), name: "x", period_seconds: 60 }),
        404,
        "not_found",
      );

      await client.heartbeats.delete({ project, name: "backup" });
      await rejects(() => client.heartbeats.get({ project, name: "backup" }), 404, "not_found");
      const gone = await app.handler(new Request(`${BASE}/ping/${token}`));
      assert.equal(gone.status, 404, "a deleted heartbeat's URL answers 404");
      await gone.body?.cancel();
      assert.ok(seen.every((c) => c.includes(" /trpc/")), "every call went through /trpc");
    } finally {
      await app.close();
    }
  });
}
