/**
 * Test support: a PostgreSQL cluster of the test's own, made with `initdb` in a temporary folder
 * and run with `pg_ctl` on a spare loopback port, so that a test can stop and start it without
 * touching the shared server. Run as root, the tools run as the `postgres` user.
 */

const BIN_DIRS = [
  "/usr/lib/postgresql/15/bin",
  "/usr/lib/postgresql/16/bin",
  "/usr/lib/postgresql/17/bin",
];

export interface OwnCluster {
  /** A postgres:// URL for the cluster's `postgres` database, user postgres, no password. */
  url: string;
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster and removes its folder. */
  destroy(): Promise<void>;
}

/** Where `initdb` and `pg_ctl` live, or null when this machine has no PostgreSQL server tools. */
export function findPgBin(): string | null {
  for (const dir of BIN_DIRS) {
    try {
      Deno.statSync(`${dir}/pg_ctl`);
      return dir;
    } catch { /* not this one */ }
  }
  return null;
}

/** A port that was free a moment ago on 127.0.0.1. */
export function sparePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

async function idOf(user: string, flag: "-u" | "-g"): Promise<number> {
  const out = await new Deno.Command("id", { args: [flag, user], stdout: "piped" }).output();
  return Number(new TextDecoder().decode(out.stdout).trim());
}

/** Creates and starts a cluster of its own; the caller destroys it. */
export async function startOwnCluster(): Promise<OwnCluster> {
  const bin = findPgBin();
  if (!bin) throw new Error("PostgreSQL server tools (initdb, pg_ctl) are not installed");
  const asRoot = Deno.uid() === 0;
  const dir = await Deno.makeTempDir({ prefix: "probe-pg-" });
  if (asRoot) await Deno.chown(dir, await idOf("postgres", "-u"), await idOf("postgres", "-g"));
  const port = sparePort();
  const data = `${dir}/data`;

  const run = async (tool: string, args: string[]) => {
    const [command, allArgs] = asRoot
      ? ["runuser", ["-u", "postgres", "--", `${bin}/${tool}`, ...args]]
      : [`${bin}/${tool}`, args];
    const out = await new Deno.Command(command, { args: allArgs, stdout: "piped", stderr: "piped" })
      .output();
    if (!out.success) {
      const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
      throw new Error(`${tool} failed: ${text.trim()}`);
    }
  };

  await run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    "-c listen_addresses=127.0.0.1",
    "-c fsync=off",
    "-c full_page_writes=off",
  ].join(" ");
  const start = () => run("pg_ctl", ["-D", data, "-o", options, "-l", `${dir}/log`, "-w", "start"]);
  const stop = () => run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
  let running = false;
  await start();
  running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start: async () => {
      await start();
      running = true;
    },
    stop: async () => {
      await stop();
      running = false;
    },
    destroy: async () => {
      if (running) await stop().catch(() => {});
      running = false;
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Runs `work` and says how long it took, in milliseconds (for the outage tests' budgets). */
export async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}
