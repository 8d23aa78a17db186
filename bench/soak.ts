/**
 * `deno task bench:soak`: the service under a steady mix of reads and rewrites at 64 connections
 * for 10 minutes, its resident memory sampled every 10 s. Passes when RSS grows by less than 10%
 * between minute 2 and the end.
 *
 * Environment: SOAK_MINUTES (10), SOAK_WARM_MINUTES (2, the reference point), and the
 * BENCH_DATABASE_URL, BENCH_CONNECTIONS, BENCH_THREADS and BENCH_POOL_SIZE of `bench:http`.
 */
import { probeUrlAt, projectAt } from "./seed.ts";
import {
  BENCH_KEY,
  benchSettings,
  envNumber,
  loadNote,
  mib,
  PROBES_PER_PROJECT,
  PROJECTS,
  requireWrk,
  seededDatabase,
  startService,
} from "./setup.ts";
import { runWrk, type WrkRequest } from "./wrk.ts";

const SAMPLE_SECONDS = 10;
const MAX_GROWTH = 0.10;

/** Reads, lists and rewrites in turn, over every seeded project. */
function mix(): WrkRequest[] {
  return Array.from({ length: PROJECTS * 3 }, (_, n) => {
    const i = Math.floor(n / 3);
    const project = projectAt(i);
    switch (n % 3) {
      case 0:
        return { method: "GET", path: `/api/v1/projects/${project}` };
      case 1:
        return { method: "GET", path: `/api/v1/projects/${project}/probes` };
      default:
        return {
          method: "POST",
          path: `/api/v1/projects/${project}/probes`,
          body: JSON.stringify({ url: probeUrlAt(i % PROBES_PER_PROJECT) }),
        };
    }
  });
}

async function main(): Promise<number> {
  await requireWrk();
  const settings = benchSettings();
  const minutes = envNumber("SOAK_MINUTES", 10);
  const warmMinutes = envNumber("SOAK_WARM_MINUTES", 2);
  if (warmMinutes >= minutes) throw new Error("SOAK_WARM_MINUTES must be less than SOAK_MINUTES");

  console.log(`Seeding ${PROJECTS} projects x ${PROBES_PER_PROJECT} probes ...`);
  const database = await seededDatabase(settings.adminUrl);
  const dataDir = await Deno.makeTempDir({ prefix: "probe-soak-" });
  // The access log is read as it is written, to tell which answers were not 2xx and why.
  const failures = new Map<string, number>();
  const samples: string[] = [];
  const onLine = (line: string) => {
    const status = /"status":(\d{3})/.exec(line)?.[1];
    const bad = status ? Number(status) >= 300 : /"level":"(warn|error)"/.test(line);
    if (!bad) return;
    const key = status ? `status ${status}` : (/"msg":"([^"]*)"/.exec(line)?.[1] ?? "other");
    failures.set(key, (failures.get(key) ?? 0) + 1);
    if (samples.length < 5) samples.push(line.slice(0, 400));
  };
  const service = await startService({
    databaseUrl: database.url,
    poolSize: settings.poolSize,
    dataDir,
    onLine,
  });
  try {
    console.log(
      `Soak: ${minutes} min at ${settings.connections} connections; ${loadNote()}`,
    );
    const rss: { second: number; rssKiB: number }[] = [];
    const started = performance.now();
    const load = runWrk({
      url: service.url,
      requests: mix(),
      headers: { "x-service-api-key": BENCH_KEY, "content-type": "application/json" },
      connections: settings.connections,
      threads: settings.threads,
      seconds: minutes * 60,
    });
    let done = false;
    load.finally(() => done = true).catch(() => {});
    while (!done) {
      await Promise.race([load, new Promise((r) => setTimeout(r, SAMPLE_SECONDS * 1000))]);
      if (done) break;
      const second = Math.round((performance.now() - started) / 1000);
      const { rssKiB } = await service.memory();
      rss.push({ second, rssKiB });
      if (second % 60 < SAMPLE_SECONDS) console.log(`  ${second} s: RSS ${mib(rssKiB)}`);
    }
    const result = await load;
    const at = (second: number) =>
      rss.reduce((best, s) =>
        Math.abs(s.second - second) < Math.abs(best.second - second) ? s : best
      );
    const reference = at(warmMinutes * 60);
    const end = rss[rss.length - 1];
    const growth = (end.rssKiB - reference.rssKiB) / reference.rssKiB;
    const peak = (await service.memory()).peakKiB;
    console.log(
      `${result.requests} requests, ${result.rps.toFixed(0)} req/s, p50 ${
        result.p50Ms.toFixed(1)
      } ms, p99 ${
        result.p99Ms.toFixed(1)
      } ms, answers >= 400: ${result.non2xx}, socket errors: ${result.socketErrors}`,
    );
    console.log(
      `RSS at ${reference.second} s: ${mib(reference.rssKiB)}; at ${end.second} s: ${
        mib(end.rssKiB)
      }; growth ${(growth * 100).toFixed(1)}% (limit ${MAX_GROWTH * 100}%); peak ${mib(peak)}`,
    );
    console.log(`Load after the run: ${loadNote()}`);
    if (failures.size > 0) {
      console.log(
        `Not 2xx, or logged as warn/error: ${JSON.stringify(Object.fromEntries(failures))}`,
      );
      for (const line of samples) console.log(`  ${line}`);
    }
    const ok = growth < MAX_GROWTH && result.non2xx + result.socketErrors === 0;
    console.log(ok ? "soak passed" : "soak FAILED");
    return ok ? 0 : 1;
  } finally {
    await service.stop();
    await database.drop();
    await Deno.remove(dataDir, { recursive: true });
  }
}

if (import.meta.main) Deno.exit(await main());
