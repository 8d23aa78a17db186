/**
 * Delivery isolation, the claims' side: a claim takes at most a target's share of the shared
 * slots, the oldest first, and puts each idle target's oldest on a slot of its own. On both
 * databases. The same through the real path, with receivers that hang, fail or never answer
 * beside a working one, takes real seconds and bounds how soon the working one is served: it is in
 * the end-to-end tier (`e2e/timed/alerts_isolation_test.ts`).
 */
import assert from "node:assert/strict";
import { json } from "../storage/json.ts";
import type { Db } from "../storage/database.ts";
import { backends, freshDatabase } from "../testing/app.ts";
import { CLAIM_LEASE_MS, claimNotifications, deferTarget } from "./outbox/outbox.ts";

/** Writes due notifications, each `at` ms after a minute ago. */
async function writeDue(db: Db, rows: { id: string; target: string; at: number }[]) {
  const due = Date.now() - 60_000;
  await db.insertInto("notifications").values(rows.map((r) => ({
    id: r.id,
    event: "target.test",
    target: r.target,
    incident_id: null,
    payload: json({}),
    next_attempt_at: new Date(due + r.at),
  }))).execute();
}

for (const backend of backends()) {
  Deno.test(`a claim takes at most a target's share, the oldest first [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    const db = handle.db;
    try {
      // Ten for a busy target, older than the two of a quiet one.
      await writeDue(db, [
        ...Array.from({ length: 10 }, (_, i) => ({ id: `msg_busy${i}`, target: "busy", at: i })),
        ...[0, 1].map((i) => ({ id: `msg_quiet${i}`, target: "quiet", at: 100 + i })),
      ]);
      const now = new Date();
      const ids = (claimed: { id: string }[]) => claimed.map((c) => c.id).sort();
      const first = await claimNotifications(db, { deliverer: "a", now, limit: 6, perTarget: 2 });
      assert.deepEqual(ids(first), ["msg_busy0", "msg_busy1", "msg_quiet0", "msg_quiet1"]);
      // A room of its own for a target: 0 takes none of it, 3 three, whatever the share.
      const none = await claimNotifications(db, {
        deliverer: "b",
        now,
        limit: 6,
        perTarget: 2,
        rooms: { busy: 0 },
      });
      assert.deepEqual(none, []);
      const three = await claimNotifications(db, {
        deliverer: "b",
        now,
        limit: 6,
        perTarget: 2,
        rooms: { busy: 3 },
      });
      assert.deepEqual(ids(three), ["msg_busy2", "msg_busy3", "msg_busy4"]);
      assert.equal(three.every((c) => c.attempt === 1), true);
      // A paused target's notifications are deferred, but for those claimed and in flight.
      const until = new Date(now.getTime() + 2 * CLAIM_LEASE_MS);
      assert.equal(await deferTarget(db, { target: "busy", until, now }), 5);
      const later = await claimNotifications(db, {
        deliverer: "c",
        now: new Date(now.getTime() + CLAIM_LEASE_MS + 1),
        limit: 20,
        perTarget: 20,
      });
      // After the claims' leases and before the pause's end: the five claimed before, not the rest.
      assert.deepEqual(
        ids(later),
        [
          "msg_busy0",
          "msg_busy1",
          "msg_busy2",
          "msg_busy3",
          "msg_busy4",
          "msg_quiet0",
          "msg_quiet1",
        ],
      );
      const deferred = await db.selectFrom("notifications").select(["id", "attempts"])
        .where("next_attempt_at", ">=", until).orderBy("id").execute();
      assert.deepEqual(deferred.map((r) => [r.id, r.attempts]), [
        ["msg_busy5", 0],
        ["msg_busy6", 0],
        ["msg_busy7", 0],
        ["msg_busy8", 0],
        ["msg_busy9", 0],
      ]);
    } finally {
      await handle.close();
    }
  });
}

for (const backend of backends()) {
  Deno.test(`a claim puts each idle target's oldest on a slot of its own [${backend}]`, async () => {
    const handle = await freshDatabase(backend);
    const db = handle.db;
    try {
      // Three each for two targets, older than the two of a third.
      await writeDue(db, [
        ...[0, 1, 2].map((i) => ({ id: `msg_a${i}`, target: "a", at: i })),
        ...[0, 1, 2].map((i) => ({ id: `msg_b${i}`, target: "b", at: 10 + i })),
        ...[0, 1].map((i) => ({ id: `msg_ok${i}`, target: "ok", at: 20 + i })),
      ]);
      const now = new Date();
      const claim = async (limit: number, own?: { busy: string[]; free: number }) =>
        (await claimNotifications(db, { deliverer: "d", now, limit, perTarget: 4, own }))
          .map((c) => c.id).sort();
      // No shared slot free: the targets with nothing in flight send their oldest on their own.
      assert.deepEqual(await claim(0, { busy: ["a"], free: 10 }), ["msg_b0", "msg_ok0"]);
      // One shared slot: the oldest due, whoever's; those in flight have no slot of their own.
      assert.deepEqual(await claim(1, { busy: ["a", "b", "ok"], free: 10 }), ["msg_a0"]);
      // Own slots run out too: one left, for the oldest.
      assert.deepEqual(await claim(0, { busy: [], free: 1 }), ["msg_a1"]);
      // Without own slots, the limit bounds it all, as before.
      assert.deepEqual(await claim(0), []);
      assert.deepEqual(await claim(2), ["msg_a2", "msg_b1"]);
    } finally {
      await handle.close();
    }
  });
}
