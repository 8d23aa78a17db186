/**
 * The typed client's locations calls, and the `location` filter of results, stats and series,
 * against a real app in-process, on PGlite and, with TEST_DATABASE_URL, on PostgreSQL. A remote
 * location's runs are made through the runner protocol with its token.
 */
import assert from "node:assert/strict";
import { apiSuite, uniqueName } from "../server/testing/app.ts";
import { runRemotely } from "../server/testing/remote_runs.ts";
import { startTarget } from "../server/testing/target_server.ts";
import { runDueProbesOnce } from "../server/testing/runs.ts";
import { clientOf, rejects } from "./testing.ts";

apiSuite("typed client: locations", (test) => {
  test("list, create (token once), get, update, rotate, delete", async ({ app }) => {
    const seen: string[] = [];
    const client = clientOf({ app }, seen);
    const listed = await client.locations.list();
    assert.equal(listed.data[0].name, "local");
    assert.equal(listed.data[0].kind, "local");
    assert.equal(listed.meta.count, listed.data.length);

    const name = uniqueName("loc");
    const made = await client.locations.create({ name, label: "Office" });
    assert.equal(made.data.kind, "remote");
    assert.match(made.data.token, /^plt_/);
    const read = await client.locations.get({ location: name });
    assert.equal(read.data.label, "Office");
    assert.ok(!("token" in read.data), "a read has no token");
    assert.ok(!JSON.stringify(await client.locations.list()).includes(made.data.token));

    assert.equal((await client.locations.update({ location: name, label: "HQ" })).data.label, "HQ");
    assert.equal((await client.locations.update({ location: name, label: null })).data.label, null);
    const rotated = await client.locations.rotateToken({ location: name });
    assert.notEqual(rotated.data.token, made.data.token);

    await rejects(() => client.locations.create({ name }), 409, "conflict");
    await rejects(() => client.locations.rotateToken({ location: "local" }), 409, "conflict");
    await rejects(() => client.locations.get({ location: "nowhere" }), 404, "not_found");
    await rejects(
      () => client.locations.create({ name: "-bad" }),
      422,
      "validation_failed",
      "name",
    );

    // In use by a probe: refused; moved back home: deleted.
    const project = uniqueName();
    await client.projects.create({ project });
    const { data: probe } = await client.probes.create({
      project,
      url: "https://example.com/away",
      locations: ["local", name],
    });
    const { data: got } = await client.probes.get({ project, probeId: probe.probe_id });
    assert.deepEqual(got.locations, ["local", name]);
    assert.deepEqual(got.effective_locations, ["local", name]);
    await rejects(
      () => client.probes.create({ project, url: "https://example.com/x", locations: ["mars"] }),
      422,
      "validation_failed",
      "locations.0",
    );
    await rejects(() => client.locations.delete({ location: name }), 409, "conflict");
    await client.probes.update({ project, probeId: probe.probe_id, locations: null });
    assert.equal(await client.locations.delete({ location: name }), undefined);
    await rejects(() => client.locations.get({ location: name }), 404, "not_found");
    assert.ok(seen.every((s) => s.includes("/trpc/")), "every call went through /trpc");
  });

  test("results, stats and series of one location", async ({ app }) => {
    const target = await startTarget();
    try {
      const client = clientOf({ app });
      const name = uniqueName("loc");
      const { data: loc } = await client.locations.create({ name });
      const project = uniqueName();
      await client.projects.create({ project });
      const { data: probe } = await client.probes.create({
        project,
        url: `${target.origin}/ok?both`,
        locations: ["local", name],
      });
      await runDueProbesOnce(app.database.db);
      assert.equal(
        await runRemotely(app.handler, loc.token, { outcome: "down", durationMs: 900 }),
        1,
      );
      const ref = { project, probeId: probe.probe_id };

      const all = await client.results.list(ref);
      assert.deepEqual(all.data.map((r) => r.location).sort(), ["local", name].sort());
      const away = await client.results.list({ ...ref, location: name });
      assert.deepEqual(away.data.map((r) => [r.location, r.outcome]), [[name, "down"]]);
      const here = await client.results.list({ ...ref, location: "local" });
      assert.deepEqual(here.data.map((r) => r.location), ["local"]);

      assert.equal((await client.results.stats(ref)).data.runs, 2);
      const awayStats = await client.results.stats({ ...ref, location: name });
      assert.equal(awayStats.data.runs, 1);
      assert.equal(awayStats.data.uptime, 0);
      assert.equal((await client.results.stats({ ...ref, location: "local" })).data.uptime, 1);

      const series = await client.results.series({ ...ref, location: name });
      const runs = series.data.buckets.reduce((n, b) => n + b.runs, 0);
      assert.equal(runs, 1);
      assert.equal(series.data.buckets.reduce((n, b) => n + b.down, 0), 1);
      const home = await client.results.series({ ...ref, location: "local" });
      assert.equal(home.data.buckets.reduce((n, b) => n + b.down, 0), 0);
      await rejects(
        () => client.results.stats({ ...ref, location: "-bad" }),
        422,
        "validation_failed",
      );
      // The location's read counts the run it recorded.
      const read = await client.locations.get({ location: name });
      assert.equal(read.data.checks_per_minute, 1);
      assert.equal(read.data.runners, 1);
      assert.equal(read.data.version, "test-1");
    } finally {
      await target.close();
    }
  });
});
