/**
 * What the crash test's clients were told, and so what the database must hold. A write the
 * service acknowledged (2xx) must be there; a write whose answer was lost in the crash may or
 * may not be. Each probe URL has one writer at a time, so its possible contents are known.
 */

export type Fate =
  | "live" // created with a 2xx, no delete sent
  | "maybe-created" // create sent, answer lost
  | "deleting" // delete in flight
  | "maybe-deleted" // delete sent, answer lost
  | "deleted"; // deleted with a 2xx

export interface ProbeEntry {
  /** The latency of the last write that got a 2xx. */
  acked?: number;
  /** Latencies of writes since then whose answers were lost: any of them may have landed. */
  possible: Set<number>;
}

export interface ProjectEntry {
  name: string;
  fate: Fate;
  probes: Map<string, ProbeEntry>;
}

/** What was read back from the database after a crash. */
export interface Stored {
  live: Map<string, Map<string, number | null>>; // project -> url -> latency
  archived: Map<string, Map<string, number | null>[]>; // project -> snapshots' probes
}

export class Ledger {
  readonly projects = new Map<string, ProjectEntry>();

  /** Live projects no one is deleting: safe to write probes to or to delete. */
  usable(): ProjectEntry[] {
    return [...this.projects.values()].filter((p) => p.fate === "live");
  }

  /** Every way the stored state breaks a promise, as sentences; empty when it keeps them all. */
  violations(stored: Stored): string[] {
    const problems: string[] = [];
    for (const [name, snapshots] of stored.archived) {
      if (stored.live.has(name)) problems.push(`${name} is both live and archived`);
      if (snapshots.length > 1) problems.push(`${name} is archived ${snapshots.length} times`);
    }
    for (const p of this.projects.values()) {
      const live = stored.live.get(p.name);
      const archive = stored.archived.get(p.name)?.[0];
      switch (p.fate) {
        case "live":
          if (!live) problems.push(`${p.name} was created (2xx) but is not live`);
          if (archive) problems.push(`${p.name} was never deleted but is archived`);
          break;
        case "maybe-created":
          if (archive) problems.push(`${p.name} was never deleted but is archived`);
          break;
        case "deleting":
        case "maybe-deleted":
          if (!live && !archive) problems.push(`${p.name} is neither live nor archived`);
          break;
        case "deleted":
          if (live) problems.push(`${p.name} was deleted (2xx) but is live`);
          if (!archive) problems.push(`${p.name} was deleted (2xx) but is not archived`);
          break;
      }
      const probes = live ?? archive;
      for (const [url, entry] of p.probes) {
        const where = live ? "live" : "in the archive";
        const found = probes?.has(url) ? probes.get(url) : undefined;
        if (found === undefined) {
          if (entry.acked !== undefined && probes) {
            problems.push(`${p.name} ${url} was written (2xx) but is not ${where}`);
          }
          continue;
        }
        const allowed = new Set(entry.possible);
        if (entry.acked !== undefined) allowed.add(entry.acked);
        if (!allowed.has(found as number)) {
          problems.push(
            `${p.name} ${url} holds latency ${found}, expected one of ${[...allowed].join(", ")}`,
          );
        }
      }
    }
    return problems;
  }

  /** Settles every uncertain entry to what the database holds, for the next round. */
  settle(stored: Stored): void {
    for (const p of [...this.projects.values()]) {
      const live = stored.live.get(p.name);
      if (p.fate !== "deleted") {
        p.fate = live ? "live" : stored.archived.has(p.name) ? "deleted" : p.fate;
      }
      if (p.fate === "maybe-created") {
        this.projects.delete(p.name);
        continue;
      }
      const probes = live ?? stored.archived.get(p.name)?.[0];
      for (const [url, entry] of p.probes) {
        const found = probes?.get(url);
        if (typeof found === "number") {
          entry.acked = found;
        }
        entry.possible.clear();
        if (entry.acked === undefined) p.probes.delete(url);
      }
    }
  }
}
