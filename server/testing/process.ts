/**
 * The one way tests and benchmarks start the product as a subprocess: the server
 * (`server/main.ts`), the runner (`server/operations/runner_process.ts`) or any other Deno script, with the
 * permissions `deno task start` grants, then waited for, read, measured and stopped.
 *
 * @module
 */
import { sparePort } from "./cluster.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
/** `deno task start`: the HTTP server. */
export const SERVER_ENTRY = `${ROOT}server/main.ts`;
/** `deno task runner`: the probe runner alone, with no HTTP server. */
export const RUNNER_ENTRY = `${ROOT}server/operations/runner_process.ts`;

/**
 * The permissions the product runs with: those of `deno task start` and `deno task runner` in
 * deno.json (`deno task migrate` has all but the C library's, for the heap trim). Every
 * subprocess here gets exactly these, so what a test sees is what an operator gets.
 */
export const PERMISSIONS: readonly string[] = [
  "--allow-net",
  "--allow-env",
  "--allow-read",
  "--allow-write",
  "--allow-sys",
  "--allow-ffi=/lib,/usr/lib,/lib64,/usr/lib64",
];

export type Stream = "stdout" | "stderr";

/** A line the process printed, on either stream, in the order the lines arrived. */
export interface Line {
  stream: Stream;
  text: string;
}

export interface ServerProcess {
  /** `http://127.0.0.1:<port>`: where the process was told (by PORT) to listen. */
  url: string;
  port: number;
  pid: number;
  /** Sends a signal (SIGKILL, modelling a crash, unless told); a process gone already is fine. */
  kill(signal?: Deno.Signal): void;
  /** Resolves when the process has ended and, if captured, its output has been read to the end. */
  status: Promise<Deno.CommandStatus>;
  /** SIGTERM, then SIGKILL if it has not ended within `graceMs`; resolves with its status. */
  stop(graceMs?: number): Promise<Deno.CommandStatus>;
  /** The process's resident memory now and at its peak, in KiB, from /proc. */
  memory(): Promise<{ rssKiB: number; peakKiB: number }>;
  /** The CPU time (user + system) it has used so far, in seconds, from /proc. */
  cpuSeconds(): Promise<number>;
  /** The lines printed so far (with `output: "capture"`). */
  lines: Line[];
  /** The lines printed so far on both streams, or on one, joined by newlines. */
  output(stream?: Stream): string;
  /**
   * Resolves with the first line, printed already or to come, that `match` accepts. Rejects
   * when the output ends without one or after `timeoutMs`, with the output in the message.
   */
  waitForLine(match: (text: string) => boolean, timeoutMs?: number): Promise<string>;
}

export interface StartOptions {
  /** The script to run: `SERVER_ENTRY` by default, `RUNNER_ENTRY`, or a test's own script. */
  entry?: string;
  /**
   * Variables for the process, on top of ours (or instead: `clearEnv`). HOST is 127.0.0.1 and
   * PORT a spare port unless given here.
   */
  env?: Record<string, string>;
  /** Starts the process with `env` alone (plus HOST and PORT), not with ours underneath. */
  clearEnv?: boolean;
  cwd?: string;
  /** Extra flags for `deno run`, such as `--cpu-prof`. */
  denoFlags?: string[];
  /**
   * Whether to wait, before resolving, until `GET /healthz` answers 200 on the port (default
   * true). Off for processes that serve no HTTP (the runner) or are expected to fail at start.
   */
  waitReady?: boolean;
  readyTimeoutMs?: number;
  /**
   * With output captured: once ready, also waits for a line that this accepts, such as
   * `isListeningLine`, so that what the start-up printed before it is in `lines`.
   */
  readyLine?: (text: string) => boolean;
  /**
   * The child's stdout and stderr: dropped (the default), passed on to ours (for debugging), or
   * captured into `lines` for `output` and `waitForLine`.
   */
  output?: "null" | "inherit" | "capture";
  /** Receives each line as it arrives (whatever `output` says, the streams are then read). */
  onLine?: (text: string, stream: Stream) => void;
}

/**
 * Starts the script on a spare port and, unless told not to, waits until `/healthz` answers.
 * Throws, with the output if captured, when the process ends or does not answer in time.
 */
export async function startServerProcess(options: StartOptions = {}): Promise<ServerProcess> {
  const entry = options.entry ?? SERVER_ENTRY;
  // A PORT given is the one to wait on (a test that had to name the address first).
  const port = options.env?.PORT ? Number(options.env.PORT) : sparePort();
  const url = `http://127.0.0.1:${port}`;
  const capture = options.output === "capture";
  const read = capture || options.onLine !== undefined;
  const stdio = read ? "piped" : options.output === "inherit" ? "inherit" : "null";
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, ...(options.denoFlags ?? []), entry],
    env: { HOST: "127.0.0.1", PORT: String(port), ...options.env },
    clearEnv: options.clearEnv,
    cwd: options.cwd,
    stdin: "null",
    stdout: stdio,
    stderr: stdio,
  }).spawn();

  const lines: Line[] = [];
  let ended = false;
  let listeners: (() => void)[] = [];
  const notify = () => listeners.splice(0).forEach((listener) => listener());
  const take = (stream: Stream) => (text: string) => {
    if (capture) lines.push({ stream, text });
    options.onLine?.(text, stream);
    notify();
  };
  const drained = read
    ? Promise.all([
      child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines())
        .pipeTo(new WritableStream({ write: take("stdout") })),
      child.stderr.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines())
        .pipeTo(new WritableStream({ write: take("stderr") })),
    ]).catch(() => {})
    : Promise.resolve();
  const status = drained.then(() => child.status).finally(() => {
    ended = true;
    notify();
  });
  const output = (stream?: Stream) =>
    lines.filter((l) => !stream || l.stream === stream).map((l) => l.text).join("\n");

  const proc: ServerProcess = {
    url,
    port,
    pid: child.pid,
    status,
    lines,
    output,
    kill: (signal = "SIGKILL") => {
      try {
        child.kill(signal);
      } catch { /* already gone */ }
    },
    stop: async (graceMs = 30_000) => {
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
      try {
        return await status;
      } finally {
        clearTimeout(timer);
      }
    },
    memory: () => memoryOf(child.pid),
    cpuSeconds: () => cpuSecondsOf(child.pid),
    waitForLine: (match, timeoutMs = 60_000) => {
      if (!capture) throw new Error('waitForLine needs output: "capture"');
      return new Promise((resolve, reject) => {
        let seen = 0;
        const timer = setTimeout(() => {
          listeners = listeners.filter((l) => l !== check);
          reject(new Error(`${entry}: no such line in ${timeoutMs} ms; output:\n${output()}`));
        }, timeoutMs);
        const check = () => {
          for (; seen < lines.length; seen++) {
            if (match(lines[seen].text)) {
              clearTimeout(timer);
              return resolve(lines[seen].text);
            }
          }
          if (ended) {
            clearTimeout(timer);
            return reject(new Error(`${entry} ended without such a line; output:\n${output()}`));
          }
          listeners.push(check);
        };
        check();
      });
    },
  };
  if (options.waitReady === false) return proc;

  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  const printed = () => (capture ? `; output:\n${output()}` : "");
  let ready = false;
  while (!ready) {
    try {
      const response = await fetch(`${url}/healthz`);
      await response.body?.cancel();
      ready = response.ok;
    } catch { /* not listening yet */ }
    if (ready) break;
    if (ended) throw new Error(`${entry} exited before it answered${printed()}`);
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      await status;
      throw new Error(`${entry} did not answer on ${url} in time${printed()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (options.readyLine) {
    try {
      await proc.waitForLine(options.readyLine, Math.max(deadline - Date.now(), 1000));
    } catch (error) {
      await proc.stop();
      throw error;
    }
  }
  return proc;
}

/** The server's "listening" log line: start-up prints it last, once it serves. */
export function isListeningLine(text: string): boolean {
  return text.includes('"msg":"listening"');
}

/** VmRSS and VmHWM (the peak) of a process, in KiB. */
export async function memoryOf(pid: number): Promise<{ rssKiB: number; peakKiB: number }> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const field = (name: string) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+)`, "m"))?.[1]);
  return { rssKiB: field("VmRSS"), peakKiB: field("VmHWM") };
}

/** Linux's USER_HZ: the unit of the times in /proc/<pid>/stat. */
const CLOCK_TICKS = 100;

/**
 * User plus system CPU time of a process so far, in seconds; with `reaped`, also that of its
 * children that ended and that it waited for (how a server that forks, as PostgreSQL's
 * postmaster does, counts its ended backends).
 */
export async function cpuSecondsOf(pid: number, { reaped = false } = {}): Promise<number> {
  // The fields after the command name, which is in parentheses and may hold spaces.
  const stat = (await Deno.readTextFile(`/proc/${pid}/stat`)).split(") ")[1].split(" ");
  const own = Number(stat[11]) + Number(stat[12]);
  return (reaped ? own + Number(stat[13]) + Number(stat[14]) : own) / CLOCK_TICKS;
}

/** Splits a text stream into lines. */
function splitLines(): TransformStream<string, string> {
  let rest = "";
  return new TransformStream({
    transform(chunk, controller) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop()!;
      for (const part of parts) controller.enqueue(part);
    },
    flush(controller) {
      if (rest) controller.enqueue(rest);
    },
  });
}

/** A REST call to a server process with an API key: the status and the parsed body. */
export async function restCall(
  server: Pick<ServerProcess, "url">,
  key: string,
  method: string,
  path: string,
  body?: unknown,
  // deno-lint-ignore no-explicit-any
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: {
      "x-service-api-key": key,
      ...(body !== undefined && { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}
