// Backups hold the locations: the locations table (with its tokens' digests, never a
// token), the runners seen and the claims, probes' `locations`, projects' `default_locations`,
// and results and schedules per location. Restored into an empty database, the API reads the
// same, and the location's token (whose digest was restored) still claims its runs.
import assert from "node:assert/strict";
import { sql } from "kysely";
import { type App, createApp } from "../../app.ts";
import type { DatabaseHandle } from "../../storage/database.ts";
import { createLogger } from "../../base/log.ts";
import {
  backends,
  BASE,
  freshDatabase,
  TEST_API_KEY,
  TestClient,
  uniqueName,
} from "../../testing/app.ts";
import { emptyDatabase } from "../../testing/backups.ts";
import { runRemotely } from "../../testing/remote_runs.ts";
import { readBackup } from "./format.ts";
import { restoreBackup } from "./restore.ts";

function appOver(database: DatabaseHandle): Promise<App> {
  return createApp({
    database,
    apiKeys: [TEST_API_KEY],
    log: createLogger("silent"),
    remoteRuns: { syncEveryMs: 0 },
  });
}

async function* once(text: string): AsyncGenerator<string> {
  yield text;
}

/** What the API shows of locations and of the probes and results that name them. */
async function locationsView(api: TestClient, project: string) {
  const get = async (path: string) => {
    const res = await api.get(path);
    assert.equal(res.status, 200, `${path}: ${res.text}`);
    return res.body.data;
  };
  const locations = (await get("/api/v1/locations")).map((l: Record<string, unknown>) => ({
    name: l.name,
    label: l.label,
    kind: l.kind,
    created_at: l.created_at,
    updated_at: l.updated_at,
    probes: l.probes,
    last_seen_at: l.last_seen_at,
    version: l.version,
  }));
  const probes = await get(`/api/v1/projects/${project}/probes`);
  const view: Record<string, unknown> = {
    locations,
    project: await get(`/api/v1/projects/${project}`),
    probes,
  };
  for (const probe of probes as { probe_id: string }[]) {
    const path = `/api/v1/projects/${project}/probes/${probe.probe_id}`;
    for (const location of locations as { name: string }[]) {
      view[`${path}@${location.name}`] = await get(`${path}/results?location=${location.name}`);
      const stats = await get(`${path}/stats?location=${location.name}&window=1h`);
      view[`${path}@${location.name}/runs`] = [stats.runs, stats.up, stats.down];
    }
  }
  return view;
}

for (const backend of backends()) {
  Deno.test(`a backup holds the locations and what names them, and restores them [${backend}]`, async () => {
    const source = await appOver(await freshDatabase(backend));
    const restoredHandle = await emptyDatabase(backend);
    let restored: App | undefined;
    try {
      const api = new TestClient(source.handler);
      const name = uniqueName("loc");
      const made = await api.post("/api/v1/locations", { name, label: "Office" });
      assert.equal(made.status, 201, made.text);
      const token: string = made.body.data.token;
      const project = uniqueName("backup");
      assert.equal(
        (await api.post("/api/v1/projects", { project, default_locations: [name] })).status,
        201,
      );
      const follows = await api.post(`/api/v1/projects/${project}/probes`, {
        url: "https://example.com/follows",
      });
      assert.equal(follows.status, 201, follows.text);
      const own = await api.post(`/api/v1/projects/${project}/probes`, {
        url: "https://example.com/own",
        locations: ["local", name],
      });
      assert.equal(own.status, 201, own.text);
      assert.equal(await runRemotely(source.handler, token, { outcome: "down" }), 2);

      const response = await source.handler(
        new Request(`${BASE}/backup`, { headers: { "x-service-api-key": TEST_API_KEY } }),
      );
      assert.equal(response.status, 200);
      const text = await response.text();
      assert.ok(!text.includes(token), "a backup never holds a location's token");
      const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l));
      const tables = lines.filter((l) => typeof l.table === "string").map((l) => l.table);
      for (const table of ["locations", "location_runners", "location_claims"]) {
        assert.ok(tables.includes(table), `${table} is in the backup`);
      }
      const rows = lines.at(-1).end.rows;
      assert.equal(rows.locations, 1);
      assert.equal(rows.location_runners, 1);
      assert.ok(rows.location_claims >= 1);

      await restoreBackup({ db: restoredHandle.db, backup: readBackup(once(text)) });
      restored = await appOver(restoredHandle);
      const again = new TestClient(restored.handler);
      const before = await locationsView(api, project);
      assert.deepEqual(await locationsView(again, project), before);
      // The views hold what is to be compared: the probe's own locations, and the remote runs.
      assert.ok(JSON.stringify(before).includes(`["local","${name}"]`));
      assert.ok(
        Object.entries(before).some(([k, v]) =>
          k.endsWith(`@${name}/runs`) && JSON.stringify(v) === "[1,0,1]"
        ),
      );
      const { rows: scheduled } = await sql<{ n: number }>`
        select count(*)::int as n from probe_schedule where location = ${name}`
        .execute(restoredHandle.db);
      assert.equal(scheduled[0].n, 2, "the remote location's schedule rows came back");

      // The token was stored as its digest, and the digest came back: the runners carry on.
      const claim = await again.post(
        "/api/v1/runner/claim",
        { runner: "after-restore", version: "t", wait_seconds: 0 },
        { key: token },
      );
      assert.equal(claim.status, 200, claim.text);
      assert.equal(claim.body.data.location, name);
      // And a location still cannot be deleted while probes name it.
      assert.equal((await again.delete(`/api/v1/locations/${name}`)).status, 409);
    } finally {
      await restored?.close();
      if (!restored) await restoredHandle.close();
      await source.close();
    }
  });
}
