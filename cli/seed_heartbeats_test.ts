/**
 * Heartbeats through export and seed: one service's heartbeats exported (settings only, no ping
 * token), seeded into a second service (new ping URLs; a status page naming a heartbeat by its
 * probe id comes along), which then exports the same text; a second seed changes nothing, a
 * changed timing keeps the URL, `--prune` deletes the unlisted. On PGlite and, with
 * TEST_DATABASE_URL, PostgreSQL, in-process.
 */
import assert from "node:assert/strict";
import { backends, uniqueName } from "../server/testing/app.ts";
import { heartbeatApp } from "../server/testing/heartbeats.ts";
import { clientOf } from "../client/testing.ts";
import { exportSeed, renderSeed } from "./export.ts";
import { applySeed, parseSeedFile, type Step } from "./seed.ts";

/** The backup heartbeat as made, and as its export entry reads. */
const BACKUP = {
  name: "backup",
  schedule: "30 2 * * *",
  timezone: "Europe/Berlin",
  grace_seconds: 3600,
  max_duration_seconds: 2700,
  min_duration_seconds: 60,
};

const actions = (steps: Step[]) =>
  steps.filter((s) => s.kind === "heartbeat").map((s) => `${s.target} ${s.action}`);

for (const backend of backends()) {
  Deno.test(`heartbeats: export, then seed into another service [${backend}]`, async () => {
    const first = await heartbeatApp(backend);
    const second = await heartbeatApp(backend);
    try {
      const a = clientOf(first);
      const b = clientOf(second);
      const project = uniqueName("hb");
      await a.projects.create({ project });
      const backup = await a.heartbeats.create({ project, ...BACKUP });
      await a.heartbeats.create({ project, name: "queue", period_seconds: 300 });
      await a.statusPages.update({ project, public: true, probe_ids: [backup.data.probe_id] });

      const exported = await exportSeed(a);
      const text = renderSeed(exported, "yaml");
      assert.equal(exported.counts.heartbeats, 2);
      const token = backup.data.ping_url.split("/").at(-1)!;
      assert.ok(!text.includes(token), "no ping token in an export");
      assert.ok(!text.includes("/ping/"), "no ping URL in an export");
      const entry = (exported.seed.projects as { project: string; heartbeats?: unknown }[])
        .find((p) => p.project === project);
      assert.deepEqual(entry?.heartbeats, [
        BACKUP,
        { name: "queue", period_seconds: 300, grace_seconds: 60 },
      ]);

      // Only this project goes over: the other tests' projects are not this test's business.
      const file = parseSeedFile(
        JSON.stringify({ projects: [entry] }),
        "heartbeats.json",
      );
      const steps = await applySeed(b, file);
      assert.deepEqual(actions(steps), ["backup created", "queue created"]);
      assert.match(steps.find((s) => s.kind === "heartbeat")?.note ?? "", /a new ping URL/);
      const seeded = (await b.heartbeats.get({ project, name: "backup" })).data;
      assert.notEqual(seeded.ping_url.split("/").at(-1), token, "a seeded heartbeat has a new URL");
      assert.equal(
        seeded.probe_id,
        backup.data.probe_id,
        "the same probe id, so pages still name it",
      );
      assert.deepEqual((await b.statusPages.get({ project })).data.probe_ids, [seeded.probe_id]);
      const again = (await exportSeed(b)).seed.projects as { project: string }[];
      assert.deepEqual(again.find((p) => p.project === project), entry, "the same export back");

      assert.deepEqual(actions(await applySeed(b, file)), ["backup unchanged", "queue unchanged"]);
      const changed = parseSeedFile(
        JSON.stringify({
          projects: [{
            project,
            heartbeats: [{ name: "backup", period_seconds: 86_400, grace_seconds: 600 }],
          }],
        }),
        "changed.json",
      );
      assert.deepEqual(actions(await applySeed(b, changed, { dryRun: true })), [
        "backup updated",
      ]);
      assert.equal(
        (await b.heartbeats.get({ project, name: "backup" })).data.schedule,
        "30 2 * * *",
      );
      assert.deepEqual(actions(await applySeed(b, changed, { prune: true })), [
        "backup updated",
        "queue deleted",
      ]);
      const after = (await b.heartbeats.get({ project, name: "backup" })).data;
      assert.equal(after.period_seconds, 86_400);
      assert.equal(after.schedule, null);
      assert.equal(after.max_duration_seconds, null);
      assert.equal(after.ping_url, seeded.ping_url, "a change keeps the ping URL");
      assert.deepEqual((await b.heartbeats.list({ project })).data.map((h) => h.name), ["backup"]);

      assert.throws(
        () =>
          parseSeedFile(
            JSON.stringify({
              projects: [{
                project,
                heartbeats: [{ name: "x", period_seconds: 60 }, { name: "x", period_seconds: 90 }],
              }],
            }),
            "twice.json",
          ),
        /heartbeats\.1\.name: this heartbeat is listed twice/,
      );
    } finally {
      await first.app.close();
      await second.app.close();
    }
  });
}
