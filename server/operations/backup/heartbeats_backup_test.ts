// Backups hold the heartbeats whole, ping tokens included (unlike an export, which gives a seeded
// heartbeat a new URL): restored into an empty database, the API reads the same heartbeat and
// pings, and the job's old ping URL still pings it.
import assert from "node:assert/strict";
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
import { emptyDatabase, pieces } from "../../testing/backups.ts";
import { heartbeatsPath } from "../../testing/heartbeats.ts";
import { readBackup } from "./format.ts";
import { restoreBackup } from "./restore.ts";

const appOver = (database: DatabaseHandle): Promise<App> =>
  createApp({
    database,
    apiKeys: [TEST_API_KEY],
    log: createLogger("silent"),
    remoteRuns: { syncEveryMs: 0 },
    config: { publicUrl: "https://probes.example.com" },
  });

for (const backend of backends()) {
  Deno.test(`a backup keeps heartbeats with their ping URLs [${backend}]`, async () => {
    const source = await appOver(await freshDatabase(backend));
    const restoredHandle = await emptyDatabase(backend);
    let restored: App | undefined;
    try {
      const api = new TestClient(source.handler);
      const project = uniqueName("hbb");
      assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
      const made = await api.post(heartbeatsPath(project), {
        name: "backup",
        schedule: "30 2 * * *",
        timezone: "Europe/Berlin",
      });
      assert.equal(made.status, 201, made.text);
      const path = new URL(made.body.data.ping_url).pathname;
      const ping = await source.handler(
        new Request(`${BASE}${path}/0`, {
          method: "POST",
          body: "dumped",
        }),
      );
      assert.equal(ping.status, 200, await ping.text());

      const response = await source.handler(
        new Request(`${BASE}/backup`, { headers: { "x-service-api-key": TEST_API_KEY } }),
      );
      assert.equal(response.status, 200);
      const text = await response.text();
      const rows = JSON.parse(text.trimEnd().split("\n").at(-1)!).end.rows;
      assert.equal(rows.heartbeats, 1);
      assert.equal(rows.heartbeat_pings, 1);

      await restoreBackup({ db: restoredHandle.db, backup: readBackup(pieces(text)) });
      restored = await appOver(restoredHandle);
      const again = new TestClient(restored.handler);
      const read = async (client: TestClient) => {
        const heartbeat = await client.get(heartbeatsPath(project, "backup"));
        const pings = await client.get(`${heartbeatsPath(project, "backup")}/pings`);
        return { heartbeat: heartbeat.body.data, pings: pings.body.data };
      };
      const before = await read(api);
      assert.deepEqual(await read(again), before);
      assert.equal(before.pings[0].body, "dumped");

      // The job's URL is the same one: it pings the restored heartbeat.
      const after = await restored.handler(new Request(`${BASE}${path}`));
      assert.equal(after.status, 200, await after.text());
      assert.equal((await read(again)).heartbeat.pings_total, 2);
    } finally {
      await restored?.close();
      if (!restored) await restoredHandle.close();
      await source.close();
    }
  });
}
