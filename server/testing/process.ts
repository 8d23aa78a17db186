/**
 * Runs the real server (or any Deno script serving HTTP) as a subprocess on a spare loopback
 * port, for the crash test and the benchmarks: started, waited for, killed, measured.
 */
import { sparePort } from "./cluster.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const SERVER_ENTRY = `${ROOT}server/main.ts`;
const PERMISSIONS = ["--allow-net", "--allow-env", "--allow-read", "--allow-write", "--allow-sys"];

export interface ServerProcess {
  url: string;
  pid: number;
  /** Sends a signal; SIGKILL models a crash. */
  kill(signal?: Deno.Signal): void;
  /** Resolves when the process has ended. */
  status: Promise<Deno.CommandStatus>;
  /** The process's resident memory now and at its peak, in KiB, from /proc. */
  memory(): Promise<{ rssKiB: number; peakKiB: number }>;
  /** SIGTERM, then SIGKILL if it has not ended within `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  /** The script to run; the product's server by default. */
  entry?: string;
  env: Record<string, string>;
  /** Extra flags for `deno run`, such as `--cpu-prof`. */
  denoFlags?: string[];
  /** Keep the child's stdout and stderr on ours (for debugging); dropped by default. */
  inheritOutput?: boolean;
  /** Receives the child's stdout and stderr line by line instead. */
  onLine?: (line: string) => void;
  readyTimeoutMs?: number;
}

/** Starts the script on a spare port (passed as PORT) and waits until `/healthz` answers. */
export async function startServerProcess(options: StartOptions): Promise<ServerProcess> {
  const port = sparePort();
  const output = options.onLine ? "piped" : options.inheritOutput ? "inherit" : "null";
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, ...(options.denoFlags ?? []), options.entry ?? SERVER_ENTRY],
    env: { HOST: "127.0.0.1", ...options.env, PORT: String(port) },
    stdin: "null",
    stdout: output,
    stderr: output,
  }).spawn();
  if (options.onLine) {
    for (const stream of [child.stdout, child.stderr]) {
      stream.pipeThrough(new TextDecoderStream()).pipeThrough(lines()).pipeTo(
        new WritableStream({ write: (line) => options.onLine!(line) }),
      ).catch(() => {});
    }
  }
  const url = `http://127.0.0.1:${port}`;
  const proc: ServerProcess = {
    url,
    pid: child.pid,
    status: child.status,
    kill: (signal = "SIGKILL") => {
      try {
        child.kill(signal);
      } catch { /* already gone */ }
    },
    memory: () => memoryOf(child.pid),
    stop: async (graceMs = 5000) => {
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
      await child.status;
      clearTimeout(timer);
    },
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  let exited = false;
  child.status.then(() => exited = true);
  while (!exited) {
    try {
      const response = await fetch(`${url}/healthz`);
      await response.body?.cancel();
      if (response.ok) return proc;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      await child.status;
      throw new Error(`${options.entry ?? SERVER_ENTRY} did not answer on ${url} in time`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${options.entry ?? SERVER_ENTRY} exited before it answered`);
}

/** VmRSS and VmHWM (the peak) of a process, in KiB. */
export async function memoryOf(pid: number): Promise<{ rssKiB: number; peakKiB: number }> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const field = (name: string) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+)`, "m"))?.[1]);
  return { rssKiB: field("VmRSS"), peakKiB: field("VmHWM") };
}

/** Splits a text stream into lines. */
function lines(): TransformStream<string, string> {
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
