/**
 * Per-location figures, read from the database at scrape time with the locations'
 * own read (`listLocations`): the runners seen in the last minute, when one was last seen, runs
 * recorded in the last minute, schedule lag and probes, each labelled `location`. The labels are
 * bounded: the built-in location and the first remote ones by name, `MAX_LABELLED_LOCATIONS` in
 * all; `locations` counts every one.
 *
 * @module
 */
import { Gauge, type Registry } from "prom-client";
import type { Location } from "@probe/shared";
import type { Db } from "../../storage/database.ts";
import { listLocations } from "../../domain/locations.ts";
import type { scrapeReads } from "./registry.ts";

/** The most locations that get series of their own (the rest are counted in `locations`). */
export const MAX_LABELLED_LOCATIONS = 100;

export function locationMetrics(
  registry: Registry,
  { db, reads, localLocation }: {
    db: Db;
    reads: ReturnType<typeof scrapeReads>;
    /** The built-in location's name (`RUNNER_LOCATION`). */
    localLocation?: string;
  },
): void {
  const read = reads("locations", () => listLocations({ db, names: { localLocation } }));
  new Gauge({
    name: "locations",
    help: "Locations probes can run from: the built-in one and every remote one",
    labelNames: ["kind"],
    registers: [registry],
    async collect() {
      const all = await read();
      if (!all) return;
      this.set({ kind: "local" }, all.filter((l) => l.kind === "local").length);
      this.set({ kind: "remote" }, all.filter((l) => l.kind === "remote").length);
    },
  });
  const perLocation = (
    name: string,
    help: string,
    value: (l: Location) => number | null,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ["location", "kind"],
      registers: [registry],
      async collect() {
        const all = await read();
        this.reset();
        for (const l of (all ?? []).slice(0, MAX_LABELLED_LOCATIONS)) {
          const v = value(l);
          if (v !== null) this.set({ location: l.name, kind: l.kind }, v);
        }
      },
    });
  perLocation(
    "location_runners",
    "The location's runners seen in the last minute",
    (l) => l.runners,
  );
  perLocation(
    "location_last_seen_timestamp_seconds",
    "When one of the location's runners was last seen (Unix time); absent if never",
    (l) => l.last_seen_at === null ? null : Date.parse(l.last_seen_at) / 1000,
  );
  perLocation(
    "location_checks_per_minute",
    "Runs the location recorded in the last minute",
    (l) => l.checks_per_minute,
  );
  perLocation(
    "location_schedule_lag_seconds",
    "Age of the location's oldest due run that no runner has claimed (0: none)",
    (l) => l.lag_seconds,
  );
  perLocation(
    "location_probes",
    "Probes that run from the location (their own locations or their project's default)",
    (l) => l.probes,
  );
}
