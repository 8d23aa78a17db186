/**
 * The lease keeper alone (leases.ts), with a clock set by hand: `renew` extends only the leases
 * past half their length (all of them when asked), in the database too, and forgets dropped ones.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import { createLogger } from "../base/log.ts";
import { backends, freshDatabase, uniqueName } from "../testing/app.ts";
import { createLeaseKeeper } from "./leases.ts";
import { claimDue, syncSchedules } from "./store.ts";

const LEASE = 20_000;

for (const backend of backends()) {
  Deno.test(`lease keeper renews only the leases past half their length [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    const db = handle.db;
    try {
      const project = uniqueName();
      await db.insertInto("projects").values({ name: project }).execute();
      await sql`insert into probes (project, probe_id, url, method, headers)
        select ${project}, 'id-' || g, 'https://l.test/' || g, 'GET', '{}'::json
        from generate_series(1, 3) g`.execute(db);
      const t0 = Date.now();
      await syncSchedules(db, { now: t0, intervalMs: 60_000 });
      const claimed = await claimDue(db, {
        now: t0,
        horizon: t0 + 1000,
        leaseUntil: t0 + LEASE,
        runner: "r",
        limit: 10,
      });
      assert.equal(claimed.length, 3);
      const [a, b, c] = claimed;
      const leaseUntil = async () => {
        const { rows } = await sql<{ probe_key: string | number; lease_until: Date | string }>`
          select probe_key, lease_until from probe_schedule where leased_by = 'r'`.execute(db);
        return new Map(rows.map((r) => [String(r.probe_key), new Date(r.lease_until).getTime()]));
      };

      let now = t0;
      const keeper = createLeaseKeeper({
        db,
        log: createLogger("silent"),
        runner: "r",
        now: () => now,
        leaseMs: LEASE,
        deferMs: 5000,
        tickMs: 1000,
      });
      keeper.hold(a, t0);
      keeper.hold(b, t0);
      // Held later (as by a later claim): its lease is younger.
      keeper.hold(c, t0 + 3000);
      assert.equal(keeper.size, 3);

      // Just before half the lease: nothing to renew, no statement.
      now = t0 + LEASE / 2 - 1;
      assert.equal(await keeper.renew(now), 0);
      assert.deepEqual(
        await leaseUntil(),
        new Map([[a.key, t0 + LEASE], [b.key, t0 + LEASE], [
          c.key,
          t0 + LEASE,
        ]]),
      );

      // At half: the two held since t0, not the younger one.
      now = t0 + LEASE / 2;
      assert.equal(await keeper.renew(now), 2);
      const after = await leaseUntil();
      assert.equal(after.get(a.key), now + LEASE);
      assert.equal(after.get(b.key), now + LEASE);
      assert.equal(after.get(c.key), t0 + LEASE);

      // Renewed, they are young again: the next tick renews only the other one.
      now = t0 + 3000 + LEASE / 2;
      assert.equal(await keeper.renew(now), 1);
      assert.equal((await leaseUntil()).get(c.key), now + LEASE);

      // A dropped lease is forgotten; `all` renews every lease still held.
      keeper.drop(a);
      assert.equal(keeper.size, 2);
      now += 1;
      assert.equal(await keeper.renew(now, true), 2);
      const last = await leaseUntil();
      assert.equal(last.get(b.key), now + LEASE);
      assert.equal(last.get(c.key), now + LEASE);
      assert.equal(last.get(a.key), t0 + LEASE / 2 + LEASE);
    } finally {
      await handle.close();
    }
  });
}
