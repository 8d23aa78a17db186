/**
 * `deno task bench:runner --mix` (or `--kinds http,tls`): probes of several kinds in even shares,
 * each kind against a loopback target in a process of its own (`kind_target.ts`): an HTTP server,
 * a TCP listener, a TLS server (a certificate for `localhost` from `tls_material.ts`, its CA
 * trusted by the runners through `DENO_CERT`) and the tests' DNS responder. Figures per kind.
 */
import { sql } from "kysely";
import type { Db } from "../server/storage/database.ts";
import { type ServerProcess, startServerProcess } from "../server/testing/process.ts";
import { makeTlsMaterial, type TlsMaterial } from "./tls_material.ts";

export const KINDS = ["http", "tcp", "tls", "dns"] as const;
export type Kind = (typeof KINDS)[number];

/** The kinds a `--kinds` list names, in the order of `KINDS`; throws on any other name. */
export function kindsOf(list: string): Kind[] {
  const named = list.split(",").map((k) => k.trim()).filter(Boolean);
  const unknown = named.filter((k) => !(KINDS as readonly string[]).includes(k));
  if (unknown.length || !named.length) {
    throw new Error(`--kinds takes some of ${KINDS.join(",")}, not ${list}`);
  }
  return KINDS.filter((k) => named.includes(k));
}

export interface MixTargets {
  kinds: Kind[];
  /** Each kind's target process, and the ports it listens on. */
  processes: Map<Kind, ServerProcess>;
  ports: Map<Kind, number[]>;
  /** Environment for the runner processes (`DENO_CERT`: the TLS target's CA). */
  runnerEnv: Record<string, string>;
  /** Stops the targets; what each served (requests, connections, handshakes, queries). */
  close(): Promise<Map<Kind, number>>;
}

/** Ports a kind's target listens on: a probe's URL is unique in its project. */
const PORTS = 250;

/** The URL of a probe of a kind (SQL, `i` and `port` columns). */
function urlSql(kind: Kind) {
  switch (kind) {
    case "http":
      return sql<string>`'http://127.0.0.1:' || port || '/p/' || i`;
    case "tcp":
      return sql<string>`'tcp://127.0.0.1:' || port`;
    case "tls":
      return sql<string>`'tls://localhost:' || port`;
    case "dns":
      return sql<string>`'dns://127.0.0.1:' || port || '/example.test?type=A'`;
  }
}

/** Starts one target process per kind, listening on as many ports as its share of `n` needs. */
export async function startMixTargets(kinds: Kind[], n: number): Promise<MixTargets> {
  const material: TlsMaterial | null = kinds.includes("tls") ? await makeTlsMaterial() : null;
  const processes = new Map<Kind, ServerProcess>();
  const ports = new Map<Kind, number[]>();
  try {
    for (const kind of kinds) {
      const target = await startServerProcess({
        entry: new URL("./kind_target.ts", import.meta.url).pathname,
        env: {
          TARGET_KIND: kind,
          // The HTTP probes differ by path: one port.
          TARGET_PORTS: String(kind === "http" ? 1 : Math.min(PORTS, Math.ceil(n / kinds.length))),
          ...(material && { TLS_CERT: material.cert, TLS_KEY: material.key }),
        },
        waitReady: false,
        output: "capture",
      });
      processes.set(kind, target);
      const line = await target.waitForLine((l) => l.startsWith('{"ports"'));
      ports.set(kind, JSON.parse(line).ports);
    }
  } catch (error) {
    for (const p of processes.values()) p.kill("SIGKILL");
    await material?.remove();
    throw error;
  }
  return {
    kinds,
    processes,
    ports,
    runnerEnv: material ? { DENO_CERT: material.ca } : {},
    async close() {
      const served = new Map<Kind, number>();
      for (const [kind, target] of processes) {
        await target.stop(5_000);
        const line = target.lines.find((l) => l.text.startsWith('{"served"'));
        served.set(kind, line ? JSON.parse(line.text).served : NaN);
      }
      await material?.remove();
      return served;
    },
  };
}

/**
 * `n` probes in even shares of the kinds, ids `b-<kind>-<i>`, spread over projects `mix-<j>` and
 * the kind's target ports so that no project has a URL twice.
 */
export async function insertMixProbes(db: Db, targets: MixTargets, n: number): Promise<void> {
  const { kinds } = targets;
  const projects = Math.ceil(Math.ceil(n / kinds.length) / PORTS);
  await sql`
    insert into projects (name) select 'mix-' || j from generate_series(0, ${projects - 1}::int) j`
    .execute(db);
  for (const [index, kind] of kinds.entries()) {
    const share = Math.floor(n / kinds.length) + (index < n % kinds.length ? 1 : 0);
    const ports = targets.ports.get(kind)!;
    await sql`
      insert into probes (project, probe_id, url, method, headers)
      select 'mix-' || (i % ${projects}::int), ${`b-${kind}-`} || i, ${urlSql(kind)}, 'GET', '{}'
      from (select i, (${ports}::int[])[1 + (i / ${projects}::int) % ${ports.length}::int] as port
            from generate_series(0, ${share - 1}::int) as i) s`.execute(db);
  }
}

/** Checks per minute of each kind and in all, due in [since, until), with slip and latency. */
export async function printByKind(
  db: Db,
  { since, until, served }: { since: Date; until: Date; served: Map<Kind, number> },
): Promise<void> {
  const minutes = (until.getTime() - since.getTime()) / 60_000;
  const { rows } = await sql<{
    kind: Kind;
    checks: number;
    up: number;
    slip50: number;
    slip99: number;
    ms50: number;
    ms99: number;
    error: string | null;
  }>`
    select split_part(p.url, ':', 1) as kind, count(*)::int as checks,
           count(*) filter (where r.outcome = 'up')::int as up,
           percentile_disc(0.5) within group (order by extract(epoch from (r.started_at - r.due_at)) * 1000) as slip50,
           percentile_disc(0.99) within group (order by extract(epoch from (r.started_at - r.due_at)) * 1000) as slip99,
           percentile_disc(0.5) within group (order by r.duration_ms) as ms50,
           percentile_disc(0.99) within group (order by r.duration_ms) as ms99,
           mode() within group (order by r.error) as error
    from probe_results r join probes p on p.key = r.probe_key
    where r.due_at >= ${since} and r.due_at < ${until}
    group by 1 order by 1`.execute(db);
  const perMinute = (n: number) => Math.round(n / minutes).toLocaleString("en");
  const ms = (n: number) => `${Math.round(Number(n))} ms`;
  console.log("kind   checks/min     up   slip p50 / p99      latency p50 / p99   target served");
  for (const row of rows) {
    console.log(
      `${row.kind.padEnd(6)} ${perMinute(row.checks).padStart(10)} ${
        String(row.up === row.checks ? "all" : row.up).padStart(6)
      }   ${`${ms(row.slip50)} / ${ms(row.slip99)}`.padEnd(18)} ${
        `${row.ms50} / ${row.ms99} ms`.padEnd(19)
      } ${served.get(row.kind) ?? "?"}` +
        (row.up < row.checks && row.error ? `  (most said: ${row.error})` : ""),
    );
  }
  const total = rows.reduce((a, r) => a + r.checks, 0);
  console.log(`all    ${perMinute(total).padStart(10)}`);
}
