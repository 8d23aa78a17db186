/**
 * Connection hygiene of the real server (issue 10, "Hard to knock over"), started as a subprocess:
 * idle connections by the thousand, the cap, unfinished heads (slowloris), bodies that stop, the
 * process running out of file descriptors, and a port already in use. Everything runs on
 * loopback, bounded in count and time.
 *
 * A server's file limit is lowered once it runs, with `prlimit --pid` (Deno raises its soft
 * limit to the hard one at start, so a limit inherited from here would not hold).
 */
import assert from "node:assert/strict";
import {
  isListeningLine,
  memoryOf,
  type ServerProcess,
  startServerProcess,
} from "../../server/testing/process.ts";

const KEY = "connections-key-0123";
const encoder = new TextEncoder();
/** The bound of the issue: health checks and reads answer within this under attack. */
const ANSWER_MS = 1000;

/** This process's limit on open files, soft and hard. */
function ownFileLimits(): { soft: number; hard: number } {
  const text = Deno.readTextFileSync("/proc/self/limits");
  const [, soft, hard] = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text)!;
  const value = (v: string) => (v === "unlimited" ? Number.MAX_SAFE_INTEGER : Number(v));
  return { soft: value(soft), hard: value(hard) };
}

function hasPrlimit(): boolean {
  try {
    return new Deno.Command("prlimit", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

const linux = Deno.build.os === "linux";
const prlimit = linux && hasPrlimit();

/** Sets the limit on open files of a running process (ours or a server's), soft and/or hard. */
async function setFileLimit(pid: number, limit: string): Promise<void> {
  const out = await new Deno.Command("prlimit", {
    args: ["--pid", String(pid), `--nofile=${limit}`],
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`prlimit failed: ${new TextDecoder().decode(out.stderr)}`);
}

/** Whether this process may open `n` files (raising its soft limit up to the hard one if need be). */
function canOpen(n: number): boolean {
  if (!linux) return false;
  const { soft, hard } = ownFileLimits();
  return soft >= n || (prlimit && hard >= n);
}

async function ensureOwnFileLimit(n: number): Promise<void> {
  if (ownFileLimits().soft < n) await setFileLimit(Deno.pid, `${n}:`);
}

/** Starts the server (no runner) with its own data folder. */
async function startServer(
  env: Record<string, string>,
): Promise<{ server: ServerProcess; dataDir: string }> {
  const dataDir = await Deno.makeTempDir({ prefix: "connections-" });
  const server = await startServerProcess({
    env: { SERVICE_API_KEY: KEY, DATA_DIR: dataDir, RUNNER: "off", ...env },
    output: "capture",
    readyLine: isListeningLine,
  });
  return { server, dataDir };
}

async function stopServer({ server, dataDir }: { server: ServerProcess; dataDir: string }) {
  const status = await server.stop();
  await Deno.remove(dataDir, { recursive: true });
  return status;
}

/**
 * Opens `n` connections that send nothing, `batch` at a time. `paced`: after each batch, a
 * request on a new connection must answer, so that the server has accepted the batch (the
 * accept queue is first in, first out) before the next one: a flood faster than the server
 * accepts leaves connections in the kernel's queue, which tests nothing of ours.
 */
async function openIdle(
  server: ServerProcess,
  n: number,
  { batch = 250, paced = true }: { batch?: number; paced?: boolean } = {},
): Promise<Deno.TcpConn[]> {
  const conns: Deno.TcpConn[] = [];
  for (let i = 0; i < n; i += batch) {
    const size = Math.min(batch, n - i);
    conns.push(
      ...await Promise.all(
        Array.from(
          { length: size },
          () => Deno.connect({ hostname: "127.0.0.1", port: server.port }),
        ),
      ),
    );
    if (paced) assert.equal((await timedRequest(`${server.url}/healthz`)).status, 200);
  }
  return conns;
}

function closeAll(conns: Deno.Conn[]): void {
  for (const conn of conns) {
    try {
      conn.close();
    } catch { /* closed already */ }
  }
}

/** Resolves true when the server closes `conn` (EOF or reset) within `ms`, false otherwise. */
async function closedWithin(conn: Deno.Conn, ms: number): Promise<boolean> {
  const buffer = new Uint8Array(4096);
  const deadline = performance.now() + ms;
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0) return false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), left);
    });
    try {
      const n = await Promise.race([conn.read(buffer), timeout]);
      if (n === "timeout") return false;
      if (n === null) return true;
    } catch {
      return true;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** One request on a connection of its own; its status and how long it took. */
async function timedRequest(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; ms: number }> {
  const client = Deno.createHttpClient({});
  const started = performance.now();
  try {
    const response = await fetch(url, { ...init, client, signal: AbortSignal.timeout(10_000) });
    await response.body?.cancel();
    return { status: response.status, ms: performance.now() - started };
  } finally {
    client.close();
  }
}

const authenticated = { headers: { "x-service-api-key": KEY } };

/** `/healthz` and an authenticated read both answer 200 within ANSWER_MS. */
async function assertAnswering(server: ServerProcess, what: string): Promise<void> {
  const health = await timedRequest(`${server.url}/healthz`);
  const read = await timedRequest(`${server.url}/api/v1/projects/kept`, authenticated);
  assert.equal(health.status, 200, `${what}: /healthz`);
  assert.equal(read.status, 200, `${what}: authenticated read`);
  assert.ok(health.ms < ANSWER_MS, `${what}: /healthz took ${health.ms.toFixed(0)} ms`);
  assert.ok(read.ms < ANSWER_MS, `${what}: the read took ${read.ms.toFixed(0)} ms`);
}

async function createProject(server: ServerProcess): Promise<void> {
  const res = await fetch(`${server.url}/api/v1/projects`, {
    method: "POST",
    headers: { "x-service-api-key": KEY, "content-type": "application/json" },
    body: JSON.stringify({ project: "kept" }),
  });
  await res.body?.cancel();
  assert.equal(res.status, 201);
}

/** The file descriptors a process holds open. */
async function openFiles(pid: number): Promise<number> {
  let n = 0;
  for await (const _ of Deno.readDir(`/proc/${pid}/fd`)) n++;
  return n;
}

/** Error-level lines, 500 answers and failed starts in the server's output. */
function problems(server: ServerProcess): string[] {
  return server.lines.map((l) => l.text).filter((text) =>
    text.includes('"level":"error"') || text.includes('"status":500') ||
    text.includes("start-up failed") || text.includes('"stack"')
  );
}

const MiB = 1024;

Deno.test({
  name: "10,000 idle connections without a key: health checks and reads answer within 1 s",
  ignore: !canOpen(11_200),
  fn: async () => {
    await ensureOwnFileLimit(11_200);
    // Timeouts far off, so that the connections stay open for the whole test.
    const started = await startServer({ IDLE_TIMEOUT_MS: "120000", HEADERS_TIMEOUT_MS: "120000" });
    const { server } = started;
    let conns: Deno.TcpConn[] = [];
    try {
      // The default cap: the descriptors free at start (Deno raises its soft limit to the
      // hard one) less the embedded database's files (512) and the reserve (64), at most 16,384.
      const cap = Number(/"max_connections":(\d+)/.exec(server.output())?.[1]);
      assert.ok(cap <= Math.min(16_384, ownFileLimits().hard - 576), `max_connections ${cap}`);
      assert.ok(cap >= Math.min(16_384, ownFileLimits().hard - 576 - 64), `max_connections ${cap}`);
      await createProject(server);
      const before = await memoryOf(server.pid);
      conns = await openIdle(server, 10_000);
      // Every connection is held by the server (accepted, with a descriptor of its own).
      assert.ok((await openFiles(server.pid)) >= 10_000, "the server holds the connections");
      await assertAnswering(server, "under 10,000 idle connections");
      const after = await memoryOf(server.pid);
      const grewMiB = (after.rssKiB - before.rssKiB) / MiB;
      console.log(
        `RSS ${(before.rssKiB / MiB).toFixed(0)} MiB -> ${(after.rssKiB / MiB).toFixed(0)} MiB ` +
          `with 10,000 idle connections (+${grewMiB.toFixed(0)} MiB)`,
      );
      assert.ok(grewMiB < 256, `RSS grew by ${grewMiB.toFixed(0)} MiB`);
      assert.deepEqual(problems(server), []);
    } finally {
      closeAll(conns);
      assert.equal((await stopServer(started)).code, 0);
    }
  },
});

Deno.test({
  name: "at MAX_CONNECTIONS, new connections close the longest-waiting idle ones",
  ignore: !canOpen(2_500),
  fn: async () => {
    await ensureOwnFileLimit(2_500);
    const started = await startServer({
      MAX_CONNECTIONS: "500",
      IDLE_TIMEOUT_MS: "120000",
      HEADERS_TIMEOUT_MS: "120000",
    });
    const { server } = started;
    let conns: Deno.TcpConn[] = [];
    try {
      await createProject(server);
      await assertAnswering(server, "before");
      const base = await openFiles(server.pid); // the runtime's, the database's files
      conns = await openIdle(server, 2_000);
      await assertAnswering(server, "with 2,000 connections against a cap of 500");
      const held = (await openFiles(server.pid)) - base;
      assert.ok(held <= 500 + 16, `the server holds at most the cap (${held} more files)`);
      // The first connections were the ones closed; the last 400 or so are still open.
      const oldest = await Promise.all(conns.slice(0, 100).map((c) => closedWithin(c, 2000)));
      assert.ok(oldest.every(Boolean), "the oldest connections were closed");
      const newest = await Promise.all(conns.slice(-100).map((c) => closedWithin(c, 200)));
      assert.ok(newest.every((closed) => !closed), "the newest connections are kept");
      assert.deepEqual(problems(server), []);
    } finally {
      closeAll(conns);
      assert.equal((await stopServer(started)).code, 0);
    }
  },
});

Deno.test({
  name: "slowloris: unfinished request heads are closed after HEADERS_TIMEOUT_MS",
  ignore: !linux,
  fn: async () => {
    const started = await startServer({ HEADERS_TIMEOUT_MS: "1500", IDLE_TIMEOUT_MS: "1000" });
    const { server } = started;
    const conns = await openIdle(server, 200);
    // Each sends part of a head, then a byte every 300 ms: never silent, never complete.
    await Promise.all(conns.map((c) => c.write(encoder.encode("GET /healthz HTTP/1.1\r\nX-a: "))));
    const drip = setInterval(() => {
      for (const c of conns) c.write(encoder.encode("a")).catch(() => {});
    }, 300);
    try {
      await createProject(server);
      const sent = performance.now();
      const early = await Promise.all(conns.map((c) => closedWithin(c, 1000)));
      assert.ok(early.every((closed) => !closed), "nothing is closed before the timeout");
      await assertAnswering(server, "under 200 slowloris connections");
      const closed = await Promise.all(conns.map((c) => closedWithin(c, 4000)));
      const ms = performance.now() - sent;
      assert.ok(closed.every(Boolean), `all 200 closed (${closed.filter(Boolean).length})`);
      assert.ok(ms < 1500 + 2500, `closed after ${ms.toFixed(0)} ms`);
      assert.deepEqual(problems(server), []);
    } finally {
      clearInterval(drip);
      closeAll(conns);
      assert.equal((await stopServer(started)).code, 0);
    }
  },
});

Deno.test({
  name: "a chunked body that stops is closed after BODY_TIMEOUT_MS: no error, no 500, memory back",
  ignore: !linux,
  fn: async () => {
    const started = await startServer({ BODY_TIMEOUT_MS: "1500" });
    const { server } = started;
    const rounds: number[] = [];
    try {
      await createProject(server);
      const head = `POST /api/v1/projects HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `X-Service-Api-Key: ${KEY}\r\nContent-Type: application/json\r\n` +
        `Transfer-Encoding: chunked\r\n\r\n`;
      const chunk = `{"project":"big","description":"${"x".repeat(900 * 1024)}`;
      const stalled = encoder.encode(`${head}${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      for (let round = 0; round < 6; round++) {
        const conns = await openIdle(server, 50);
        try {
          const sent = performance.now();
          await Promise.all(conns.map((c) => c.write(stalled).catch(() => {})));
          const closed = await Promise.all(conns.map((c) => closedWithin(c, 5000)));
          const ms = performance.now() - sent;
          assert.ok(closed.every(Boolean), `round ${round}: all 50 closed`);
          assert.ok(ms >= 1000 && ms < 1500 + 2500, `round ${round}: closed after ${ms} ms`);
        } finally {
          closeAll(conns);
        }
        rounds.push((await memoryOf(server.pid)).rssKiB);
      }
      await assertAnswering(server, "after the stalled bodies");
      console.log(`RSS after each round: ${rounds.map((k) => `${(k / MiB).toFixed(0)} MiB`)}`);
      // 50 bodies of 900 KiB a round: memory that stayed held would add about 45 MiB a round.
      // The first round grows the heap; from the second on, the rounds reuse what was released,
      // and what RSS still moves is the server's own background work (the runner, the outbox):
      // so the growth per round from round 2 to round 6, well under a leak's 45 MiB.
      const perRoundMiB = (rounds[5] - rounds[1]) / 4 / MiB;
      assert.ok(
        perRoundMiB < 20,
        `RSS grew by ${perRoundMiB.toFixed(0)} MiB a round from round 2 to round 6`,
      );
      assert.deepEqual(problems(server), []);
    } finally {
      assert.equal((await stopServer(started)).code, 0);
    }
  },
});

Deno.test({
  name: "running out of file descriptors on accept is survived, and logged at most once a second",
  ignore: !prlimit,
  fn: async () => {
    // A cap far above the file limit, so that accept itself runs out of descriptors.
    const started = await startServer({
      MAX_CONNECTIONS: "5000",
      IDLE_TIMEOUT_MS: "120000",
      HEADERS_TIMEOUT_MS: "120000",
    });
    const { server } = started;
    let conns: Deno.TcpConn[] = [];
    try {
      await createProject(server);
      // A limit a little above what the server holds open now (the embedded database's files
      // grow with the schema: 245 once, 272 with the alerting tables), so that accept runs out.
      const held = [...Deno.readDirSync(`/proc/${server.pid}/fd`)].length;
      await setFileLimit(server.pid, `${held + 32}:${held + 32}`);
      const flooded = performance.now();
      // 400: past the file limit's headroom, and within the listen backlog (511), so that no connection
      // waits on the kernel's SYN retries while the server is out of descriptors (on a loaded
      // machine 600 had connects time out after two minutes: a test of TCP, not of ours).
      conns = await openIdle(server, 400, { paced: false });
      // The server stops accepting, notices, makes room and listens again.
      let answered = false;
      while (!answered && performance.now() - flooded < 15_000) {
        const health = await timedRequest(`${server.url}/healthz`).catch(() => null);
        answered = health?.status === 200;
        if (!answered) await new Promise((resolve) => setTimeout(resolve, 250));
      }
      assert.ok(answered, `/healthz answered again (output:\n${server.output()})`);
      const recoveredMs = performance.now() - flooded;
      console.log(`answering again ${recoveredMs.toFixed(0)} ms after the flood began`);
      await assertAnswering(server, "after running out of descriptors");
      const warnings = server.lines.map((l) => l.text).filter((t) => t.includes('"level":"warn"'));
      assert.ok(
        warnings.some((t) => /file descriptors/.test(t)),
        `a warning names the cause:\n${server.output()}`,
      );
      const seconds = (performance.now() - flooded) / 1000;
      for (const msg of new Set(warnings.map((t) => JSON.parse(t).msg as string))) {
        const n = warnings.filter((t) => JSON.parse(t).msg === msg).length;
        assert.ok(n <= Math.ceil(seconds) + 1, `"${msg}" logged ${n} times in ${seconds} s`);
      }
      closeAll(conns);
      conns = [];
      await new Promise((resolve) => setTimeout(resolve, 500));
      await assertAnswering(server, "once the flood has gone");
      assert.deepEqual(problems(server), []);
    } finally {
      closeAll(conns);
      assert.equal((await stopServer(started)).code, 0);
    }
  },
});

Deno.test({
  name: "with the cap below the file limit the server never runs out and keeps answering",
  ignore: !prlimit,
  fn: async () => {
    // What the default gives a process limited to 1024 files: 1024 less the embedded
    // database's files (512) and the reserve (64).
    const started = await startServer({
      MAX_CONNECTIONS: "448",
      IDLE_TIMEOUT_MS: "120000",
      HEADERS_TIMEOUT_MS: "120000",
    });
    const { server } = started;
    let conns: Deno.TcpConn[] = [];
    try {
      await createProject(server);
      await setFileLimit(server.pid, "1024:1024");
      conns = await openIdle(server, 1500);
      await assertAnswering(server, "with 1,500 connections and a file limit of 1024");
      assert.ok((await openFiles(server.pid)) < 1024);
      assert.ok(!server.output().includes("file descriptors"), "never ran out of descriptors");
      assert.deepEqual(problems(server), []);
    } finally {
      closeAll(conns);
      assert.equal((await stopServer(started)).code, 0);
    }
  },
});

Deno.test("a port in use stops start-up with one line naming PORT, before the database", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const parent = await Deno.makeTempDir({ prefix: "connections-" });
  try {
    const dataDir = `${parent}/data`;
    const server = await startServerProcess({
      env: { PORT: String(taken.addr.port), DATA_DIR: dataDir, RUNNER: "off" },
      waitReady: false,
      output: "capture",
    });
    const status = await server.status;
    assert.equal(status.code, 1);
    assert.equal(server.output("stderr"), `port ${taken.addr.port} is already in use (PORT)`);
    assert.equal(server.output("stdout"), "");
    await assert.rejects(Deno.stat(dataDir), Deno.errors.NotFound, "nothing was created");
  } finally {
    taken.close();
    await Deno.remove(parent, { recursive: true });
  }
});
