/**
 * Recording a batch of pings in one transaction: the heartbeats their tokens name are locked
 * (in key order, as the watch and the runner's store lock), each ping moves its heartbeat's state
 * in the order the pings came, the pings are kept (the latest `HEARTBEAT_PINGS_KEPT` of each
 * heartbeat) and counted, and the runs they make are recorded as the heartbeat's probe's
 * (`record.ts`). A ping whose token names no heartbeat is told so (`found: false`).
 *
 * What each kind does: a success (`/0` too) ends a run: its duration counts from an open
 * `/start`, and a run shorter than `min_duration_seconds` is a failure; `/fail` and a non-zero
 * exit code are failures at once; `/start` opens a run, which is down should its success not
 * come within `max_duration_seconds`; `/log` is kept and changes nothing. A ping inside a
 * maintenance window of its project is recorded as in maintenance: it moves no state; nor does
 * a ping of a disabled project's heartbeat (it is kept and counted).
 *
 * @module
 */
import { HEARTBEAT_PINGS_KEPT, type PingKind } from "@probe/shared";
import { type RawBuilder, sql } from "kysely";
import type { Db } from "../../storage/database.ts";
import { json } from "../../storage/json.ts";
import { compareKeys } from "../../storage/keys.ts";
import {
  deadlineAfter,
  type HeartbeatTiming,
  maxDurationMs,
} from "../../domain/heartbeat_timing.ts";
import { type HeartbeatRun, quietWrites, settleRounds, splitRuns } from "./record.ts";
import { excerpt, failureWords, inWindow, type Window } from "./words.ts";
import { LOCAL } from "../../domain/locations.ts";

/** Kept pings are cut each time a heartbeat's count passes a multiple of this. */
const PRUNE_EVERY = 25;

/** One ping as the edge took it. */
export interface Ping {
  token: string;
  at: number;
  kind: PingKind;
  exitCode: number | null;
  method: string;
  address: string | null;
  /** The kept part of the body (already cut to `HEARTBEAT_PING_BODY_KEPT`); null without one. */
  body: string | null;
  bodyBytes: number;
}

interface Locked extends HeartbeatTiming {
  probe_key: number | string;
  project: string;
  token: string;
  min_duration_seconds: number | null;
  created_at: Date | string;
  last_success_at: Date | string | null;
  last_start_at: Date | string | null;
  last_duration_ms: number | null;
  last_ping_at: Date | string | null;
  last_ping_kind: PingKind | null;
  success_deadline: Date | string;
  pings_total: number | string;
  /** False when the project is disabled: its pings are kept, and move no state. */
  enabled: boolean;
  /** Whether its probe is up (at the built-in location, where heartbeats run). */
  up: boolean;
  /** The project's maintenance windows around the batch's pings. */
  windows: { start: string; end: string }[];
}

const windowsOfRow = (row: Locked): Window[] =>
  row.windows.map((w) => ({ start: Date.parse(w.start), end: Date.parse(w.end) }));

const ms = (at: Date | string | null) => at === null ? null : new Date(at).getTime();
const iso = (at: number | null) => at === null ? null : new Date(at).toISOString();

/** A heartbeat's state as a batch moves it. */
interface Moving {
  row: Locked;
  key: string;
  n: number;
  lastSuccess: number | null;
  lastStart: number | null;
  lastDuration: number | null;
  lastPing: number | null;
  lastKind: PingKind | null;
  successDeadline: number;
}

/**
 * The batches' statements kept prepared in the database's session, by their text (the embedded
 * database: one session for good). Planning them anew was most of a batch's time there; a
 * prepared statement is planned once. PostgreSQL's driver prepares its statements itself.
 */
export type PreparedPings = Map<string, string>;

/**
 * A parameter as a literal of `EXECUTE`'s arguments (which take no bound parameters), quoted as
 * libpq's `PQescapeLiteral` does: whatever the session's `standard_conforming_strings`.
 */
function literal(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  const text = value instanceof Date ? value.toISOString() : String(value);
  const quoted = `'${text.replaceAll("'", "''")}'`;
  return text.includes("\\") ? `E${quoted.replaceAll("\\", "\\\\")}` : quoted;
}

/**
 * `query` as it is to run: as a statement prepared in the session (once) when `prepared` is
 * given. Running what this answers sends it at once, before the caller's next statement.
 */
async function statementOf<R>(
  trx: Db,
  query: RawBuilder<R>,
  prepared: PreparedPings | undefined,
): Promise<RawBuilder<R>> {
  if (!prepared) return query;
  const { sql: text, parameters } = query.compile(trx);
  let name = prepared.get(text);
  if (name === undefined) {
    // Unique, as another app may share the session (tests run two over one database).
    name = `ping_batch_${crypto.randomUUID().replaceAll("-", "")}`;
    await sql.raw(`prepare ${name} as ${text}`).execute(trx);
    prepared.set(text, name);
  }
  const args = parameters.length ? `(${parameters.map(literal).join(", ")})` : "";
  return sql.raw<R>(`execute ${name}${args}`);
}

/** Runs `query`, as a statement prepared in the session once when `prepared` is given. */
async function run<R>(
  trx: Db,
  query: RawBuilder<R>,
  prepared: PreparedPings | undefined,
): Promise<R[]> {
  return (await (await statementOf(trx, query, prepared)).execute(trx)).rows;
}

/**
 * Records `pings` (see the module's note) in a transaction of its own on `db`, committed before
 * this answers; answers, for each, whether its token was known. With `prepared`, the batch's two
 * main statements run prepared (see {@link PreparedPings}).
 *
 * When no run of the batch may move a state (the common batch), nothing is read after its
 * writes: they are sent and not waited for, and the COMMIT goes right behind them, a round trip
 * fewer a batch (PostgreSQL: pipelined on the transaction's connection; the embedded database:
 * the next message to its thread, which runs them in order). Their answer is read once the
 * COMMIT is answered, and a failure of theirs fails the batch: the transaction they were part
 * of did not commit (PostgreSQL answers the COMMIT of a failed transaction with a rollback; the
 * embedded database fails it), so no ping of it is acknowledged.
 */
export async function recordPingBatch(
  db: Db,
  pings: readonly Ping[],
  localName?: string,
  prepared?: PreparedPings,
): Promise<boolean[]> {
  let written: Promise<unknown> = Promise.resolve();
  let found: boolean[];
  try {
    found = await db.transaction().execute(async (trx) => {
      const recorded = await recordPingsSending(trx, pings, localName, prepared);
      written = recorded.written;
      return recorded.found;
    });
  } catch (error) {
    await written; // the cause, when the writes failed (the embedded database fails the COMMIT)
    throw error;
  }
  await written;
  return found;
}

/**
 * Records `pings` (see the module's note); answers, for each, whether its token was known.
 * With `prepared`, the batch's two main statements run prepared (see {@link PreparedPings}).
 */
export async function recordPings(
  trx: Db,
  pings: readonly Ping[],
  localName?: string,
  prepared?: PreparedPings,
): Promise<boolean[]> {
  const { found, written } = await recordPingsSending(trx, pings, localName, prepared);
  await written;
  return found;
}

/**
 * {@link recordPings}, with its last statement sent and not waited for when nothing follows it:
 * `written` settles with it (a rejection of it is handled, to be read by awaiting `written`).
 */
async function recordPingsSending(
  trx: Db,
  pings: readonly Ping[],
  localName: string | undefined,
  prepared: PreparedPings | undefined,
): Promise<{ found: boolean[]; written: Promise<unknown> }> {
  const tokens = [...new Set(pings.map((p) => p.token))];
  // The probe rows first (for share), as a project delete locks them before the heartbeats it
  // removes: a batch waits for a delete instead of meeting it in a deadlock.
  const first = new Date(Math.min(...pings.map((p) => p.at))).toISOString();
  const last = new Date(Math.max(...pings.map((p) => p.at))).toISOString();
  // The probe's schedule row is locked too (for share) so that its state is read as the batch
  // that held these locks before left it: a row updated meanwhile is read in its new version.
  const rows = await run(
    trx,
    sql<Locked>`
    select h.probe_key, h.project, h.token, h.period_seconds, h.schedule, h.timezone,
      h.grace_seconds, h.max_duration_seconds, h.min_duration_seconds, h.created_at,
      h.last_success_at, h.last_start_at, h.last_duration_ms, h.last_ping_at, h.last_ping_kind,
      h.success_deadline, h.pings_total, pr.status = 'enabled' as enabled, s.state = 'up' as up,
      (select coalesce(json_agg(json_build_object('start', w.starts_at, 'end', w.ends_at)), '[]')
       from maintenance_windows w
       where w.project = h.project and w.starts_at <= ${last} and w.ends_at > ${first})
        as windows
    from heartbeats h
    join probes p on p.key = h.probe_key
    join projects pr on pr.name = h.project
    join probe_schedule s on s.probe_key = h.probe_key and s.location = ${LOCAL}
    where h.token in (select x.t from json_to_recordset(${json(tokens.map((t) => ({ t })))})
      as x(t text))
    order by h.probe_key for share of p for update of h for share of s`,
    prepared,
  );
  if (rows.length === 0) return { found: pings.map(() => false), written: Promise.resolve() };
  const byToken = new Map<string, Moving>(rows.map((row) => [row.token, {
    row,
    key: String(row.probe_key),
    n: Number(row.pings_total),
    lastSuccess: ms(row.last_success_at),
    lastStart: ms(row.last_start_at),
    lastDuration: row.last_duration_ms,
    lastPing: ms(row.last_ping_at),
    lastKind: row.last_ping_kind,
    successDeadline: ms(row.success_deadline)!,
  }]));
  const kept: object[] = [];
  const runs: HeartbeatRun[] = [];
  const found = pings.map((ping) => {
    const hb = byToken.get(ping.token);
    if (!hb) return false;
    hb.n++;
    kept.push({
      k: hb.key,
      n: hb.n,
      at: iso(ping.at),
      kind: ping.kind,
      code: ping.exitCode,
      method: ping.method,
      address: ping.address,
      body: ping.body,
      bytes: ping.bodyBytes,
    });
    const run = apply(hb, ping, windowsOfRow(hb.row));
    if (run && hb.row.enabled) runs.push(run);
    return true;
  });
  const moved = [...byToken.values()].filter((hb) => hb.n !== Number(hb.row.pings_total))
    .sort((a, b) => compareKeys(a.key, b.key));
  // The oldest pings are cut now and then (each time a heartbeat's count passes a multiple of
  // `PRUNE_EVERY`), not by every batch: lists read the latest `HEARTBEAT_PINGS_KEPT` alone.
  const pruning = moved.filter((hb) =>
    Math.floor(hb.n / PRUNE_EVERY) !== Math.floor(Number(hb.row.pings_total) / PRUNE_EVERY)
  );
  const { quiet, rounds } = splitRuns(
    runs,
    new Set(rows.filter((r) => r.up).map((r) => String(r.probe_key))),
  );
  // Every write of the batch but the settling of runs that may move a state, in one statement
  // (its parts touch no row twice): a round trip each would cost more than the writing.
  const writes = [
    sql`
      update heartbeats h set pings_total = x.n, last_success_at = x.success,
        last_start_at = x.start, last_duration_ms = x.duration, last_ping_at = x.ping,
        last_ping_kind = x.kind, success_deadline = x.due, next_deadline = x.next
      from json_to_recordset(${json(moved.map(updateOf))})
        as x(k bigint, n bigint, success timestamptz, start timestamptz, duration integer,
             ping timestamptz, kind text, due timestamptz, next timestamptz)
      where h.probe_key = x.k`,
    sql`
      insert into heartbeat_pings
        (heartbeat_key, n, at, kind, exit_code, method, address, body, body_bytes)
      select x.k, x.n, x.at, x.kind, x.code, x.method, x.address, x.body, x.bytes
      from json_to_recordset(${json(kept)})
        as x(k bigint, n bigint, at timestamptz, kind text, code integer, method text,
             address text, body text, bytes integer)`,
    ...(pruning.length === 0 ? [] : [sql`
      delete from heartbeat_pings p using json_to_recordset(${
      json(pruning.map((hb) => ({ k: hb.key, n: hb.n - HEARTBEAT_PINGS_KEPT })))
    }) as x(k bigint, n bigint)
      where p.heartbeat_key = x.k and p.n <= x.n`]),
    ...quietWrites(quiet),
  ];
  const write = await statementOf(
    trx,
    sql`with ${sql.join(writes.map((w, i) => sql`${sql.raw(`w${i}`)} as (${w})`))} select 1`,
    prepared,
  );
  // Sent now, before whatever the caller sends next (see `recordPingBatch`).
  const written = write.execute(trx);
  if (rounds.length === 0) {
    written.catch(() => {}); // read by the caller
    return { found, written };
  }
  await written;
  await settleRounds(trx, rounds, localName);
  return { found, written: Promise.resolve() };
}

function updateOf(hb: Moving) {
  const t = hb.row;
  return {
    k: hb.key,
    n: hb.n,
    success: iso(hb.lastSuccess),
    start: iso(hb.lastStart),
    duration: hb.lastDuration,
    ping: iso(hb.lastPing),
    kind: hb.lastKind,
    due: iso(hb.successDeadline),
    next: iso(
      hb.lastStart === null
        ? hb.successDeadline
        : Math.min(hb.successDeadline, hb.lastStart + maxDurationMs(t)),
    ),
  };
}

/** Moves a heartbeat by one ping; the run it ends, if any. */
function apply(hb: Moving, ping: Ping, windows: readonly Window[]): HeartbeatRun | null {
  hb.lastPing = ping.at;
  hb.lastKind = ping.kind;
  if (ping.kind === "log") return null;
  if (ping.kind === "start") {
    hb.lastStart = ping.at;
    return null;
  }
  const started = hb.lastStart;
  const durationMs = started === null ? 0 : Math.max(0, ping.at - started);
  hb.lastStart = null;
  const success = ping.kind === "success" || (ping.kind === "exit" && ping.exitCode === 0);
  const run = {
    key: hb.key,
    at: ping.at,
    durationMs,
    inMaintenance: inWindow(windows, ping.at),
  };
  if (!success) {
    if (started !== null) hb.lastDuration = durationMs;
    const error = failureWords({ kind: ping.kind, exitCode: ping.exitCode, body: ping.body });
    return { ...run, passing: false, error };
  }
  // The job ran: the next deadline counts from now, even when the run was too short.
  hb.lastSuccess = ping.at;
  hb.successDeadline = deadlineAfter(hb.row, ping.at);
  if (started === null) return { ...run, passing: true, error: null };
  hb.lastDuration = durationMs;
  const min = hb.row.min_duration_seconds;
  if (min !== null && durationMs < min * 1000) {
    const error = `finished ${seconds(durationMs)} after its start, sooner than its ` +
      `min_duration_seconds (${min} s)${excerpt(ping.body)}`;
    return { ...run, passing: false, error };
  }
  return { ...run, passing: true, error: null };
}

/** A duration in words: `2.5 s`. */
export const seconds = (durationMs: number) =>
  `${Number((durationMs / 1000).toFixed(durationMs < 10_000 ? 1 : 0))} s`;
