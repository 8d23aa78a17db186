import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { Migrator } from "kysely/migration";
import { migrations } from "../../migrations/mod.ts";
import { json } from "../storage/json.ts";
import { migrateToLatest } from "../storage/migrator.ts";
import { backends, freshDatabase } from "../testing/app.ts";
import { getTarget } from "./targets.ts";
import { targetForDelivery } from "../alerting/notify/stored_target.ts";

const KEY = `whsec_${Buffer.from("k".repeat(32)).toString("base64")}`;
const SLACK_URL = "https://hooks.slack.com/services/T000/B000/XXXXsecretXXXX";
const BEFORE = "2026_11_29_100000_add_heartbeats";

for (const backend of backends()) {
  Deno.test(`targets stored before providers read and send as before [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    try {
      const db = handle.db;
      // Back to the schema before this change (its `down` run), as a database made before it.
      const migrator = new Migrator({
        db,
        provider: { getMigrations: () => Promise.resolve(migrations) },
      });
      assert.equal((await migrator.migrateTo(BEFORE)).error, undefined);
      // As the service stored them: the secret column held the key or the URL itself.
      await db.insertInto("notification_targets").values([
        {
          name: "hook",
          kind: "webhook",
          config: json({ url: "https://a.example/h" }),
          secret: KEY,
        },
        {
          name: "chat",
          kind: "slack",
          config: json({ url: "https://hooks.slack.com/…" }),
          secret: SLACK_URL,
        },
        {
          name: "ops",
          kind: "mail",
          config: json({ recipients: ["a@example.com"] }),
          secret: null,
        },
      ]).execute();

      await migrateToLatest(db);
      const hook = await getTarget({ db, name: "hook" });
      assert.deepEqual([hook.url, hook.secret], ["https://a.example/h", "whsec_…"]);
      assert.deepEqual(await targetForDelivery({ db, name: "hook" }), {
        name: "hook",
        kind: "webhook",
        url: "https://a.example/h",
        secret: KEY,
      });
      const chat = await getTarget({ db, name: "chat" });
      assert.deepEqual([chat.url, chat.secret], ["https://hooks.slack.com/…", null]);
      assert.deepEqual(await targetForDelivery({ db, name: "chat" }), {
        name: "chat",
        kind: "slack",
        url: SLACK_URL,
      });
      assert.deepEqual((await getTarget({ db, name: "ops" })).recipients, ["a@example.com"]);
      // A kind is the providers' now, not a fixed list of the database's.
      await db.insertInto("notification_targets")
        .values({ name: "later", kind: "a-kind-added-later", config: json({}) }).execute();
    } finally {
      await handle.close();
    }
  });
}
