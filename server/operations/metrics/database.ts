/**
 * Metrics read from the database layer at scrape time: each pool's figures (our own counters,
 * `server/storage/pool_stats.ts`), each probe's last result and state, and the notification queue.
 * The per-probe series come from one query per scrape, not from series kept in memory; they
 * can be switched off (`METRICS_PER_PROBE=false`), since they are about three per probe.
 *
 * @module
 */
import { sql } from "kysely";
import { Gauge, type Registry } from "prom-client";
import type { Db } from "../../storage/database.ts";
import type { PoolStats } from "../../storage/pool_stats.ts";
import type { ThreadMemory } from "../../storage/pglite_thread.ts";
import type { ProbeState } from "../../storage/schema.ts";
import { readGauge, type scrapeReads } from "./registry.ts";

type ScrapeReads = ReturnType<typeof scrapeReads>;

/** `probe_state`'s values: the further from healthy, the higher. */
export const STATE_VALUES: Record<ProbeState, number> = { unknown: 0, up: 1, degraded: 2, down: 3 };

/** Registers each pool's figures, read from `stats` at each scrape. */
export function poolMetrics(registry: Registry, stats: () => PoolStats[]): void {
  const gauge = (name: string, help: string, value: (s: PoolStats) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ["pool"],
      registers: [registry],
      collect() {
        for (const s of stats()) this.set({ pool: s.pool }, value(s));
      },
    });
  gauge("db_pool_max_connections", "Connections the pool may open", (s) => s.max);
  gauge("db_pool_open_connections", "Connections the pool has open now", (s) => s.open);
  gauge(
    "db_pool_in_use",
    "Connections in use now: waiting for a query's answer, or held by a transaction",
    (s) => s.inUse,
  );
  gauge(
    "db_pool_waiting",
    "Queries and transactions waiting for a connection (queued behind another query included)",
    (s) => s.waiting,
  );
  gauge(
    "db_queries_in_flight",
    "Queries handed to the database and not answered yet, waiting ones included",
    (s) => s.inFlight,
  );
}

/**
 * Registers the embedded database's thread's memory, read from `read` at each scrape: its V8
 * heap apart from the server's (`nodejs_heap_size_*` are the server's isolate alone) and
 * PGlite's WebAssembly memory, so that a growing RSS can be told apart.
 */
export function embeddedThreadMetrics(
  registry: Registry,
  read: () => Promise<ThreadMemory | null>,
): void {
  const gauge = (name: string, help: string, value: (m: ThreadMemory) => number) =>
    readGauge(registry, name, help, read, value);
  gauge(
    "embedded_db_heap_used_bytes",
    "The embedded database thread's V8 heap in use (live, and garbage not yet collected)",
    (m) => m.heapUsedBytes,
  );
  gauge(
    "embedded_db_heap_total_bytes",
    "The embedded database thread's V8 heap committed",
    (m) => m.heapTotalBytes,
  );
  gauge(
    "embedded_db_wasm_memory_bytes",
    "The embedded database's WebAssembly memory (it only grows)",
    (m) => m.wasmBytes,
  );
}

interface ProbeRow {
  project: string;
  probe_id: string;
  state: ProbeState | null;
  last_outcome: string | null;
  duration_ms: number | null;
}

/**
 * Registers what is read from the database at scrape time: the notification queue and, with
 * `perProbe`, each probe's series (one query for all three).
 */
export function databaseMetrics(
  registry: Registry,
  { db, reads, perProbe }: { db: Db; reads: ScrapeReads; perProbe: boolean },
): void {
  const queue = reads("notifications", async () => {
    const { rows } = await sql<{ status: string; count: number }>`
      select status, count(*)::int as count from notifications group by status`.execute(db);
    return rows;
  });
  new Gauge({
    name: "notifications",
    help: "Notifications in the outbox by status: pending (to send or retry), delivered, failed",
    labelNames: ["status"],
    registers: [registry],
    async collect() {
      const rows = await queue();
      this.reset();
      if (!rows) return;
      const counts: Record<string, number> = { pending: 0, delivered: 0, failed: 0 };
      for (const { status, count } of rows) counts[status] = count;
      for (const [status, count] of Object.entries(counts)) this.set({ status }, count);
    },
  });

  if (!perProbe) return;
  // The latency of the last run is the result the schedule row's last run points at.
  const probes = reads("probes", async () => {
    const { rows } = await sql<ProbeRow>`
      select p.project, p.probe_id, coalesce(v.state, 'unknown') as state, s.last_outcome,
        r.duration_ms
      from probes p
      join projects pr on pr.name = p.project
      left join probe_verdicts v on v.probe_key = p.key
      left join probe_schedule s on s.probe_key = p.key and s.location = ''
      left join lateral (
        select duration_ms from probe_results
        where probe_key = p.key and location = '' and started_at = s.last_run_at
        limit 1
      ) r on true`.execute(db);
    return rows;
  });
  const perProbeGauge = (
    name: string,
    help: string,
    value: (row: ProbeRow) => number | null,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ["project", "probe_id"],
      registers: [registry],
      async collect() {
        const rows = await probes();
        this.reset();
        for (const row of rows ?? []) {
          const v = value(row);
          if (v !== null) this.set({ project: row.project, probe_id: row.probe_id }, v);
        }
      },
    });
  perProbeGauge(
    "probe_up",
    "1 when the probe's last run passed (up or degraded), 0 when it failed (down or blocked); " +
      "absent before its first run",
    (row) => row.last_outcome === null ? null : isPassing(row.last_outcome) ? 1 : 0,
  );
  perProbeGauge(
    "probe_latency_seconds",
    "How long the probe's last run took; absent before its first run",
    (row) => row.duration_ms === null ? null : row.duration_ms / 1000,
  );
  perProbeGauge(
    "probe_state",
    "The probe's alerting state: 0 unknown, 1 up, 2 degraded, 3 down",
    (row) => STATE_VALUES[row.state ?? "unknown"] ?? 0,
  );
}

const isPassing = (outcome: string) => outcome === "up" || outcome === "degraded";
