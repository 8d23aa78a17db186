/**
 * The lease keeper of a runner: the leases it holds, by slot (`key@due`), from the claim until
 * the run is recorded or given back. `renew` (at each tick) extends those past half their length,
 * so no lease runs out while the runner lives and holds the run: a slot is made at most once, and
 * no run is dropped. `change` batches the leases given back or extended between ticks into one
 * statement per kind.
 *
 * @module
 */
import type { Db } from "../storage/database.ts";
import { errorFields, type Logger } from "../base/log.ts";
import { extendLeases, releaseLeases } from "./store.ts";

/** The slot a lease is held for: a probe's key and its due time. */
export interface Slot {
  key: string;
  due: number;
}

export interface LeaseKeeperOptions {
  db: Db;
  log: Logger;
  /** The runner named in the leases. */
  runner: string;
  now(): number;
  /** How long a lease holds from when it is taken or renewed. */
  leaseMs: number;
  /** How long a lease given back (`change("defer")`) stays unclaimable. */
  deferMs: number;
  /** How often `renew` runs: a run that starts within this of half its lease is extended. */
  tickMs: number;
}

export interface LeaseKeeper {
  /** Leases held now. */
  readonly size: number;
  /** Notes a lease taken at `now` (a claim). */
  hold(slot: Slot, now: number): void;
  /** Forgets a lease: the run was recorded, given back, or dropped. */
  drop(slot: Slot): void;
  /**
   * A queued run is starting: if its lease could lapse before the next `renew`, it is extended
   * to `leaseMs` from now (one batched statement; most runs wait less and need none).
   */
  starting(slot: Slot): void;
  /**
   * Gives a lease back until `deferMs` from now (`defer`), or extends it to `leaseMs` from now
   * (`extend`). Batched: one statement per kind and tick. A failure leaves the lease as it was:
   * a run given back is claimable when it runs out.
   */
  change(kind: "defer" | "extend", key: string): void;
  /**
   * Renews the leases past half their length (or all of them), in one statement; returns how
   * many were renewed (0 when the statement failed: it is logged).
   */
  renew(now: number, all?: boolean): Promise<number>;
  /** Lease changes being written (`change`); the runner waits for them when going idle. */
  readonly writes: ReadonlySet<Promise<void>>;
}

const slotOf = (s: Slot) => `${s.key}@${s.due}`;

/** A lease keeper for one runner (see the module's note). */
export function createLeaseKeeper(
  { db, log, runner, now: clockNow, leaseMs, deferMs, tickMs }: LeaseKeeperOptions,
): LeaseKeeper {
  const leases = new Map<string, { key: string; until: number }>();
  /** Lease changes, sent in one statement per kind and tick. */
  const changes = { defer: [] as string[], extend: [] as string[] };
  const writes = new Set<Promise<void>>();

  function change(kind: keyof typeof changes, key: string) {
    changes[kind].push(key);
    if (changes[kind].length > 1) return;
    const p = Promise.resolve().then(async () => {
      const keys = changes[kind];
      changes[kind] = [];
      const now = clockNow();
      try {
        if (kind === "defer") await releaseLeases(db, runner, keys, now + deferMs);
        else await extendLeases(db, runner, keys, now + leaseMs);
      } catch (error) {
        log.warn(`${kind === "defer" ? "giving back" : "extending"} leases failed`, {
          count: keys.length,
          ...errorFields(error),
        });
      }
    }).finally(() => writes.delete(p));
    writes.add(p);
  }

  return {
    get size() {
      return leases.size;
    },
    writes,
    change,
    hold(slot, now) {
      leases.set(slotOf(slot), { key: slot.key, until: now + leaseMs });
    },
    drop(slot) {
      leases.delete(slotOf(slot));
    },
    starting(slot) {
      const lease = leases.get(slotOf(slot));
      const now = clockNow();
      if (lease && lease.until - now <= leaseMs / 2 + tickMs) {
        lease.until = now + leaseMs;
        change("extend", slot.key);
      }
    },
    async renew(now, all = false) {
      const due: { key: string; until: number }[] = [];
      for (const lease of leases.values()) {
        if (all || lease.until - now <= leaseMs / 2) due.push(lease);
      }
      if (due.length === 0) return 0;
      try {
        await extendLeases(db, runner, [...new Set(due.map((l) => l.key))], now + leaseMs);
        for (const lease of due) lease.until = Math.max(lease.until, now + leaseMs);
        return due.length;
      } catch (error) {
        log.warn("renewing leases failed", { count: due.length, ...errorFields(error) });
        return 0;
      }
    },
  };
}
