/**
 * Per-heartbeat series, read from the database at scrape time in one query: each heartbeat's
 * state (the numbers of `probe_state`, so one alert rule `== 3` serves both) and how long ago it
 * was last pinged, labelled `project` and `heartbeat` (its name). Left out with
 * `METRICS_PER_PROBE=false`, as the per-probe series are. See docs/metrics.md.
 *
 * @module
 */
import { Gauge, type Registry } from "prom-client";
import { sql } from "kysely";
import type { Db } from "../../storage/database.ts";
import type { scrapeReads } from "./registry.ts";

interface HeartbeatRow {
  project: string;
  name: string;
  state: string | null;
  last_ping_at: Date | string | null;
}

/** A heartbeat's state as a number: `new` reads as a probe's `unknown`. */
export const HEARTBEAT_STATE_VALUES: Record<string, number> = { new: 0, up: 1, down: 3 };

/** The heartbeat's state as its API says it (`new` until a ping or a missed deadline). */
const stateOf = (state: string | null) =>
  state === "down" ? "down" : state === "up" || state === "degraded" ? "up" : "new";

export function heartbeatMetrics(
  registry: Registry,
  { db, reads, now = Date.now }: {
    db: Db;
    reads: ReturnType<typeof scrapeReads>;
    now?: () => number;
  },
): void {
  const heartbeats = reads("heartbeats", async () => {
    const { rows } = await sql<HeartbeatRow>`
      select h.project, h.name, v.state, h.last_ping_at
      from heartbeats h
      left join probe_verdicts v on v.probe_key = h.probe_key`.execute(db);
    return rows;
  });
  const perHeartbeat = (
    name: string,
    help: string,
    value: (row: HeartbeatRow, at: number) => number | null,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ["project", "heartbeat"],
      registers: [registry],
      async collect() {
        const rows = await heartbeats();
        const at = now();
        this.reset();
        for (const row of rows ?? []) {
          const v = value(row, at);
          if (v !== null) this.set({ project: row.project, heartbeat: row.name }, v);
        }
      },
    });
  perHeartbeat(
    "heartbeat_state",
    "The heartbeat's state: 0 new (no ping and no deadline missed yet), 1 up, 3 down",
    (row) => HEARTBEAT_STATE_VALUES[stateOf(row.state)],
  );
  perHeartbeat(
    "heartbeat_last_ping_age_seconds",
    "Seconds since the heartbeat's last ping of any kind; absent before its first",
    (row, at) =>
      row.last_ping_at === null
        ? null
        : Math.max(0, (at - new Date(row.last_ping_at).getTime()) / 1000),
  );
}
