/**
 * Per-location runner figures in the service's `/metrics`, read at scrape time from the
 * locations' read (`listLocations`): runners seen in the last minute, seconds since one was last
 * seen, checks in the last minute, and how far behind the location's schedule is.
 *
 * @module
 */
import { Gauge, type Registry } from "prom-client";
import type { Db } from "../db/database.ts";
import { listLocations } from "../domain/locations.ts";
import type { scrapeReads } from "./registry.ts";

export function locationMetrics(
  registry: Registry,
  { db, reads, localLocation, now = Date.now }: {
    db: Db;
    reads: ReturnType<typeof scrapeReads>;
    /** The built-in location's name (`RUNNER_LOCATION`); `local` unless given. */
    localLocation?: string;
    now?: () => number;
  },
): void {
  const locations = reads("locations", () => listLocations({ db, names: { localLocation } }));
  const gauge = (
    name: string,
    help: string,
    value: (l: Awaited<ReturnType<typeof listLocations>>[number]) => number | null,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ["location", "kind"],
      registers: [registry],
      async collect() {
        const rows = await locations();
        this.reset();
        for (const l of rows ?? []) {
          const v = value(l);
          if (v !== null) this.set({ location: l.name, kind: l.kind }, v);
        }
      },
    });
  gauge("location_runners", "Runners of the location seen in the last minute", (l) => l.runners);
  gauge(
    "location_last_seen_seconds",
    "Seconds since one of the location's runners was last seen (absent if never)",
    (l) => l.last_seen_at === null ? null : (now() - Date.parse(l.last_seen_at)) / 1000,
  );
  gauge(
    "location_checks_per_minute",
    "Runs the location recorded in the last minute",
    (l) => l.checks_per_minute,
  );
  gauge(
    "location_schedule_lag_seconds",
    "How far behind the location's schedule is: its oldest due run no runner has claimed",
    (l) => l.lag_seconds,
  );
  gauge("location_probes", "Probes that run from the location", (l) => l.probes);
}
