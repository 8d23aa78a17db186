/**
 * The stored keys' check (`stored_keys.ts`) on both databases: a key seen in the last second is
 * answered from the process's cache (a row deleted behind the service's back still lets it in
 * until the second is over, so no query was made), then looked up again; an expiry holds to the
 * millisecond; `last_used_at` is written once a minute at most.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { backends, freshDatabase } from "../../testing/app.ts";
import { createApiKey } from "../api_keys.ts";
import { createStoredKeyCheck, LAST_USED_EVERY_MS } from "./stored_keys.ts";

for (const backend of backends()) {
  Deno.test(`stored keys: a second's cache, expiry, last use [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    try {
      const db = handle.db;
      let now = Date.parse("2030-01-01T00:00:00Z");
      const check = createStoredKeyCheck({ db, now: () => now });
      const { key } = await createApiKey({
        db,
        input: { name: "k", role: "editor", expires_at: "2030-01-01T00:10:00Z" },
        createdBy: "test",
        now: new Date(now),
      });
      assert.equal((await check(key))?.role, "editor");
      assert.equal(await check("psk_unknown"), null);
      assert.equal(await check("not-a-stored-key"), null);
      const lastUsed = async () =>
        (await db.selectFrom("api_keys").select("last_used_at").executeTakeFirstOrThrow())
          .last_used_at?.getTime();
      assert.equal(await lastUsed(), now);

      // Deleted behind the cache's back: still in it for the second, not after.
      await sql`delete from api_keys`.execute(db);
      now += 900;
      assert.equal((await check(key))?.name, "k", "answered from the cache: no query");
      now += 200;
      assert.equal(await check(key), null, "looked up again after the second");

      // An expiry holds to the millisecond, cached or not; a use is written once a minute.
      const other = await createApiKey({
        db,
        input: { name: "e", role: "viewer", expires_at: "2030-01-01T00:02:00Z" },
        createdBy: "test",
        now: new Date(now),
      });
      assert.ok(await check(other.key));
      const written = await lastUsed();
      now += LAST_USED_EVERY_MS - 1000;
      assert.ok(await check(other.key));
      assert.equal(await lastUsed(), written, "not written again within the minute");
      now += 1000;
      assert.ok(await check(other.key));
      assert.equal(await lastUsed(), now, "written again after a minute");
      now = Date.parse("2030-01-01T00:02:00Z") - 1;
      assert.ok(await check(other.key));
      now += 1;
      assert.equal(await check(other.key), null, "expired");
    } finally {
      await handle.close();
    }
  });
}
