/**
 * The I'm alive reports through the real program: `server/main.ts` in a subprocess, on the
 * embedded database in a temporary directory, with its webhook pointed at a local receiver.
 */
import assert from "node:assert/strict";
import { webhookReceiver } from "../server/testing/receivers.ts";

const MAIN = new URL("../server/main.ts", import.meta.url).pathname;
const KEY = "main-test-key-0123456789";
const SECRET = "whsec-main-test-0123456789";

/** The environment a fresh clone would have, plus the given variables. */
function env(vars: Record<string, string>): Record<string, string> {
  const keep = ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"];
  const base = Object.fromEntries(
    keep.flatMap((k) => Deno.env.get(k) !== undefined ? [[k, Deno.env.get(k)!]] : []),
  );
  return { ...base, ...vars };
}

interface Running {
  lines: unknown[];
  /** Resolves with the first log line that matches; rejects if the process ends first. */
  waitFor(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  stop(): Promise<{ code: number; stdout: unknown[] }>;
}

/** The permissions `deno task start` grants, so these runs are what a user gets. */
const SERVER_ARGS = [
  "run",
  "--allow-net",
  "--allow-env",
  "--allow-read",
  "--allow-write",
  "--allow-sys",
  MAIN,
];

function start(vars: Record<string, string>): Running {
  const child = new Deno.Command(Deno.execPath(), {
    args: SERVER_ARGS,
    env: env(vars),
    clearEnv: true,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines: Record<string, unknown>[] = [];
  let waiters: (() => void)[] = [];
  let ended = false;
  const reading = (async () => {
    let rest = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      rest += chunk;
      const parts = rest.split("\n");
      rest = parts.pop()!;
      for (const part of parts) {
        if (!part.trim()) continue;
        try {
          lines.push(JSON.parse(part));
        } catch {
          lines.push({ text: part });
        }
      }
      waiters.splice(0).forEach((w) => w());
    }
    ended = true;
    waiters.splice(0).forEach((w) => w());
  })();
  return {
    lines,
    waitFor(match) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.find(match);
          if (found) return resolve(found);
          if (ended) return reject(new Error(`the server ended first: ${JSON.stringify(lines)}`));
          waiters.push(check);
        };
        check();
      });
    },
    async stop() {
      child.kill("SIGTERM");
      const { code } = await child.status;
      await reading;
      waiters = [];
      return { code, stdout: lines };
    },
  };
}

/** Gives up on a step that takes far longer than it should, rather than hanging the suite. */
function guard<T>(work: Promise<T>, what: string, ms = 60_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no result in ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

Deno.test("main: a bad SMTP_URL stops start-up, naming the variable but not its password", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: SERVER_ARGS,
    env: env({
      SMTP_URL: "http://monitor:hunter2-secret@mail.test/",
      MAIL_FROM: "monitor@example.test",
      MAIL_TO: "ops@example.test",
      DATA_DIR: "/nonexistent/never-created",
    }),
    clearEnv: true,
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 1);
  assert.match(stderr, /SMTP_URL/);
  assert.doesNotMatch(stderr + new TextDecoder().decode(out.stdout), /hunter2/);
});

Deno.test("main: PATCH brings the log line and the webhook call; restarts repeat nothing and warn", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "iam-alive-main-" });
  const hook = webhookReceiver([200], { secret: SECRET });
  const vars = {
    PORT: "0",
    DATA_DIR: dataDir,
    SERVICE_API_KEY: KEY,
    IAM_ALIVE_WEBHOOK_URL: hook.url,
    IAM_ALIVE_WEBHOOK_SECRET: SECRET,
    // The receiver is on loopback, which the outbound policy refuses unless allowed.
    PROBE_ALLOW_NETWORKS: "127.0.0.0/8",
  };
  try {
    const first = start(vars);
    const listening = await guard(first.waitFor((l) => l.msg === "listening"), "first start");
    const base = String(listening.url);
    const patched = await fetch(`${base}/api/v1/settings/iam-alive`, {
      method: "PATCH",
      headers: { "x-service-api-key": KEY, "content-type": "application/json" },
      body: JSON.stringify({ channels: ["log", "webhook", "mail"] }),
    });
    assert.equal(patched.status, 200);
    await patched.body?.cancel();
    const logged = await guard(first.waitFor((l) => l.msg === "iam_alive"), "the log line");
    await guard(hook.arrived(1), "the webhook call");
    assert.equal(hook.received[0].signatureValid, true);
    assert.deepEqual(JSON.parse(hook.received[0].body), logged.report);
    const stopped = await first.stop();
    assert.equal(stopped.code, 0);
    assert.ok(stopped.stdout.some((l) => (l as { msg?: string }).msg === "stopped"));
    // The configuration holds no secret in any line the server printed.
    assert.doesNotMatch(JSON.stringify(stopped.stdout), new RegExp(`${SECRET}|tok-secret|${KEY}`));

    const second = start(vars);
    const warning = await guard(
      second.waitFor((l) => l.msg === "I'm alive channel is selected but not configured"),
      "the start-up warning",
    );
    assert.equal(warning.channel, "mail");
    assert.deepEqual(warning.missing, ["SMTP_URL", "MAIL_FROM", "MAIL_TO"]);
    await guard(second.waitFor((l) => l.msg === "listening"), "second start");
    const again = await second.stop();
    assert.equal(again.code, 0);
    // Stopping waits for the reporter's first look at the schedule: a due report would show here.
    assert.equal(again.stdout.filter((l) => (l as { msg?: string }).msg === "iam_alive").length, 0);
    assert.equal(hook.received.length, 1);
  } finally {
    await hook.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
