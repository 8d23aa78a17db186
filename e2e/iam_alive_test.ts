/**
 * The I'm alive reports through the real program: `server/main.ts` in a subprocess, on the
 * embedded database in a temporary directory, with its webhook pointed at a local receiver.
 */
import assert from "node:assert/strict";
import {
  isListeningLine,
  type ServerProcess,
  startServerProcess,
} from "../server/testing/process.ts";
import { webhookReceiver } from "../server/testing/receivers.ts";

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

/** The server (with `deno task start`'s permissions), in a fresh clone's environment. */
function start(vars: Record<string, string>, ready = true): Promise<ServerProcess> {
  return startServerProcess({
    env: env(vars),
    clearEnv: true,
    output: "capture",
    waitReady: ready,
    readyLine: ready ? isListeningLine : undefined,
  });
}

/** A line of the server's log, parsed; other text as `{ text }`. */
function parse(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text);
  } catch {
    return { text };
  }
}

/** The server's log lines on stdout, parsed. */
const logLines = (server: ServerProcess) =>
  server.lines.filter((l) => l.stream === "stdout" && l.text.trim()).map((l) => parse(l.text));

/** Resolves with the first log line with this message; rejects if the process ends first. */
async function logLine(server: ServerProcess, msg: string): Promise<Record<string, unknown>> {
  return parse(await server.waitForLine((text) => parse(text).msg === msg));
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
  const server = await start({
    SMTP_URL: "http://monitor:hunter2-secret@mail.test/",
    MAIL_FROM: "monitor@example.test",
    MAIL_TO: "ops@example.test",
    DATA_DIR: "/nonexistent/never-created",
  }, false);
  const { code } = await server.status;
  const stderr = server.output("stderr");
  assert.equal(code, 1);
  assert.match(stderr, /SMTP_URL/);
  assert.doesNotMatch(stderr + server.output("stdout"), /hunter2/);
});

Deno.test("main: PATCH brings the log line and the webhook call; restarts repeat nothing and warn", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "iam-alive-main-" });
  const hook = webhookReceiver([200], { secret: SECRET });
  const vars = {
    DATA_DIR: dataDir,
    SERVICE_API_KEY: KEY,
    IAM_ALIVE_WEBHOOK_URL: hook.url,
    IAM_ALIVE_WEBHOOK_SECRET: SECRET,
    // The receiver is on loopback, which the outbound policy refuses unless allowed.
    PROBE_ALLOW_NETWORKS: "127.0.0.0/8",
  };
  const started: ServerProcess[] = [];
  try {
    const first = await start(vars);
    started.push(first);
    const base = first.url;
    const patched = await fetch(`${base}/api/v1/settings/iam-alive`, {
      method: "PATCH",
      headers: { "x-service-api-key": KEY, "content-type": "application/json" },
      body: JSON.stringify({ channels: ["log", "webhook", "mail"] }),
    });
    assert.equal(patched.status, 200);
    await patched.body?.cancel();
    const logged = await logLine(first, "iam_alive");
    await guard(hook.arrived(1), "the webhook call");
    assert.equal(hook.received[0].signatureValid, true);
    assert.deepEqual(JSON.parse(hook.received[0].body), logged.report);
    const stopped = await first.stop();
    assert.equal(stopped.code, 0);
    assert.ok(logLines(first).some((l) => l.msg === "stopped"));
    // The configuration holds no secret in any line the server printed.
    assert.doesNotMatch(first.output(), new RegExp(`${SECRET}|tok-secret|${KEY}`));

    const second = await start(vars);
    started.push(second);
    const warning = await logLine(second, "I'm alive channel is selected but not configured");
    assert.equal(warning.channel, "mail");
    assert.deepEqual(warning.missing, ["SMTP_URL", "MAIL_FROM", "MAIL_TO"]);
    const again = await second.stop();
    assert.equal(again.code, 0);
    // Stopping waits for the reporter's first look at the schedule: a due report would show here.
    assert.equal(logLines(second).filter((l) => l.msg === "iam_alive").length, 0);
    assert.equal(hook.received.length, 1);
  } finally {
    await Promise.all(started.map((server) => server.stop()));
    await hook.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
