/**
 * Where a benchmark's CPU goes, read from /proc between two moments: each process it names (and
 * each thread of those, by name), PostgreSQL's backends on one database, and the whole machine.
 */
import postgres from "postgres";
import { cpuSecondsOf } from "../server/testing/process.ts";

/** Linux's USER_HZ: the unit of the times in /proc. */
const CLOCK_TICKS = 100;

/** Busy and total CPU seconds of the whole machine so far (every core), from /proc/stat. */
async function machineSeconds(): Promise<{ busy: number; total: number }> {
  const line = (await Deno.readTextFile("/proc/stat")).split("\n")[0];
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1)
    .map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return { busy: busy / CLOCK_TICKS, total: (busy + idle + iowait) / CLOCK_TICKS };
}

/** CPU seconds of each thread of a process, by `name tid`. */
async function threadSeconds(pid: number): Promise<Map<string, number>> {
  const seconds = new Map<string, number>();
  try {
    for await (const task of Deno.readDir(`/proc/${pid}/task`)) {
      try {
        const stat = await Deno.readTextFile(`/proc/${pid}/task/${task.name}/stat`);
        const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
        seconds.set(
          `${name} ${task.name}`,
          (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS,
        );
      } catch { /* the thread ended */ }
    }
  } catch { /* the process ended */ }
  return seconds;
}

const secondsOr0 = (pid: number) => cpuSecondsOf(pid).catch(() => 0);

/** The server processes of PostgreSQL's connections to `database` now. */
async function backendPids(adminUrl: string, database: string): Promise<number[]> {
  const s = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await s<{ pid: number }[]>`
      select pid from pg_stat_activity where datname = ${database}`;
    return rows.map((r) => r.pid);
  } finally {
    await s.end();
  }
}

export interface Watched {
  label: string;
  pid: number;
  /** Also print its threads' shares (the busiest few). */
  threads?: boolean;
}

interface Snapshot {
  at: number;
  machine: { busy: number; total: number };
  processes: number[];
  threads: Map<string, number>[];
  backends: Map<number, number>;
}

/**
 * Starts watching `processes` (and, with `postgres`, the backends on that database, where the
 * PostgreSQL server runs on this machine); `report` prints each one's share of a core over the
 * time since, and CPU seconds per 1,000 of `units`.
 */
export async function watchCpu(
  processes: Watched[],
  postgres?: { adminUrl: string; database: string },
) {
  const snap = async (): Promise<Snapshot> => {
    const pids = postgres ? await backendPids(postgres.adminUrl, postgres.database) : [];
    const backendSeconds = await Promise.all(pids.map(secondsOr0));
    return {
      at: performance.now(),
      machine: await machineSeconds(),
      processes: await Promise.all(processes.map((p) => secondsOr0(p.pid))),
      threads: await Promise.all(
        processes.map((p) => p.threads ? threadSeconds(p.pid) : Promise.resolve(new Map())),
      ),
      backends: new Map(pids.map((pid, i) => [pid, backendSeconds[i]])),
    };
  };
  const start = await snap();
  return {
    /** Takes the end snapshot now (before the processes stop); prints with `print`. */
    async end() {
      const end = await snap();
      const wall = (end.at - start.at) / 1000;
      const share = (s: number) => `${(s / wall * 100).toFixed(0).padStart(3)} % of a core`;
      return {
        print(units: number, unitName: string) {
          const per = (s: number) =>
            units > 0 ? `, ${(s / units * 1000).toFixed(2)} s per 1,000 ${unitName}` : "";
          const busy = end.machine.busy - start.machine.busy;
          const total = end.machine.total - start.machine.total;
          console.log(
            `CPU over ${wall.toFixed(0)} s: machine ${(busy / total * 100).toFixed(0)} % busy ` +
              `(${navigator.hardwareConcurrency} cores, ${busy.toFixed(0)} CPU s, others' work ` +
              "included)",
          );
          processes.forEach((p, i) => {
            const s = end.processes[i] - start.processes[i];
            console.log(`  ${p.label.padEnd(24)} ${share(s)}${per(s)}`);
            if (!p.threads) return;
            const threads = [...end.threads[i]]
              .map(([name, t]) => [name, t - (start.threads[i].get(name) ?? 0)] as const)
              .filter(([, t]) => t / wall >= 0.02)
              .sort((a, b) => b[1] - a[1]);
            for (const [name, t] of threads.slice(0, 6)) {
              console.log(`    thread ${name.padEnd(24)} ${share(t)}`);
            }
          });
          if (postgres) {
            let s = 0;
            for (const [pid, t] of end.backends) s += t - (start.backends.get(pid) ?? 0);
            console.log(
              `  ${`PostgreSQL backends (${end.backends.size})`.padEnd(24)} ${share(s)}${per(s)}`,
            );
          }
        },
      };
    },
  };
}
