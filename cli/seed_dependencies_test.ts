/**
 * Dependencies through export and seed: a seed file's probe naming a probe listed after it and
 * a heartbeat (both created later in the same load), an export that writes them, loaded into a
 * second service that exports the same text; a second load changes nothing, a changed list is an
 * update of that probe alone, an unknown id is the service's 422. On PGlite and, with
 * TEST_DATABASE_URL, PostgreSQL, in-process.
 */
import assert from "node:assert/strict";
import { backends, uniqueName } from "../server/testing/app.ts";
import { heartbeatApp } from "../server/testing/heartbeats.ts";
import { clientOf, rejects } from "../client/testing.ts";
import { exportSeed } from "./export.ts";
import { applySeed, parseSeedFile, type Step } from "./seed.ts";

const DB = "tcp://127.0.0.1:9";
const API = "http://127.0.0.1:9/api";
const SHOP = "http://127.0.0.1:9/shop";

const actions = (steps: Step[]) =>
  steps.filter((s) => s.kind === "probe" || s.kind === "heartbeat")
    .map((s) => `${s.target} ${s.action}`);

/** One project's entry of an export. */
interface Entry {
  project: string;
  probes: { url: string; depends_on?: string[] }[];
  heartbeats: { name: string; depends_on?: string[] }[];
}
const entryOf = (seed: Record<string, unknown>, project: string) =>
  (seed.projects as Entry[]).find((p) => p.project === project)!;

for (const backend of backends()) {
  Deno.test(`dependencies: seeded in any order, exported, loaded back [${backend}]`, async () => {
    const first = await heartbeatApp(backend);
    const second = await heartbeatApp(backend);
    try {
      const a = clientOf(first);
      const b = clientOf(second);
      const project = uniqueName("deps");
      // Ids follow method and URL (a heartbeat's its name): read them from a throwaway project.
      const scratch = uniqueName("ids");
      await a.projects.create({ project: scratch });
      const idOf = async (url: string) =>
        (await a.probes.create({ project: scratch, url })).data.probe_id;
      const [db, api] = [await idOf(DB), await idOf(API)];
      const nightly = (await a.heartbeats.create({
        project: scratch,
        name: "nightly",
        period_seconds: 3600,
      })).data.probe_id;

      // The shop depends on the API (listed after it) and the nightly job (created after all
      // probes); the API on the database, listed last.
      const file = parseSeedFile(
        JSON.stringify({
          projects: [{
            project,
            probes: [
              { url: SHOP, depends_on: [api, nightly] },
              { url: API, depends_on: [db] },
              { url: DB },
            ],
            heartbeats: [{ name: "nightly", period_seconds: 3600, depends_on: [db] }],
          }],
        }),
        "deps.json",
      );
      assert.deepEqual(actions(await applySeed(a, file)), [
        `${SHOP} created`,
        `${API} created`,
        `${DB} created`,
        "nightly created",
      ]);
      const probeOf = async (url: string) =>
        (await a.probes.listByProject({ project })).data.find((p) => p.url === url)!;
      assert.deepEqual((await probeOf(SHOP)).depends_on, [api, nightly].sort());
      assert.deepEqual((await probeOf(API)).depends_on, [db]);
      assert.equal((await probeOf(DB)).depends_on, undefined);
      assert.deepEqual((await a.heartbeats.get({ project, name: "nightly" })).data.depends_on, [
        db,
      ]);
      assert.deepEqual(
        actions(await applySeed(a, file)),
        [`${SHOP} unchanged`, `${API} unchanged`, `${DB} unchanged`, "nightly unchanged"],
        "a second load changes nothing",
      );

      const exported = entryOf((await exportSeed(a)).seed, project);
      assert.deepEqual(
        exported.probes.map((p) => [p.url, p.depends_on]),
        [[API, [db]], [SHOP, [api, nightly].sort()], [DB, undefined]].sort((x, y) =>
          String(x[0]) < String(y[0]) ? -1 : 1
        ),
      );
      assert.deepEqual(exported.heartbeats[0].depends_on, [db]);

      // Loaded into another service (the export's order: a probe before what it depends on).
      const again = parseSeedFile(JSON.stringify({ projects: [exported] }), "export.json");
      await applySeed(b, again);
      assert.deepEqual(entryOf((await exportSeed(b)).seed, project), exported);
      assert.deepEqual(
        actions(await applySeed(b, again)).filter((a) => !a.endsWith("unchanged")),
        [],
      );

      // Only the list changes: that probe is updated in place, not rewritten.
      const fewer = parseSeedFile(
        JSON.stringify({
          projects: [{
            project,
            probes: [{ url: SHOP, depends_on: [api] }, { url: API }, { url: DB }],
            heartbeats: [{ name: "nightly", period_seconds: 3600, depends_on: [db] }],
          }],
        }),
        "fewer.json",
      );
      assert.deepEqual(actions(await applySeed(b, fewer, { dryRun: true })), [
        `${SHOP} updated`,
        `${API} updated`,
        `${DB} unchanged`,
        "nightly unchanged",
      ]);
      const shopOnB = (await b.probes.listByProject({ project })).data.find((p) => p.url === SHOP);
      assert.equal(shopOnB?.depends_on?.length, 2, "a dry run changes nothing");
      await applySeed(b, fewer);
      const after = new Map(
        (await b.probes.listByProject({ project })).data.map((p) => [p.url, p]),
      );
      assert.deepEqual(after.get(SHOP)?.depends_on, [api]);
      assert.equal(after.get(API)?.depends_on, undefined, "absent in the file: none");

      const unknown = parseSeedFile(
        JSON.stringify({ projects: [{ project, probes: [{ url: DB, depends_on: ["0123"] }] }] }),
        "unknown.json",
      );
      const refused = await rejects(() => applySeed(b, unknown), 422, "validation_failed");
      assert.match(refused.details[0].message, /no probe "0123"/);
    } finally {
      await first.app.close();
      await second.app.close();
    }
  });
}
