import { TRPCError } from "@trpc/server";
import type { DatabaseHandle, Db } from "../storage/database.ts";
import type { Scope } from "../domain/access/api_key.ts";
import type { Sessions } from "../domain/access/sessions.ts";
import type { Principal } from "../domain/principal.ts";
import type { AnswerBudget } from "./answer_size.ts";
import type { IamAliveControl } from "../alerting/iam_alive/reporter.ts";
import type { Notifier } from "../alerting/notify/targets.ts";
import type { RunNow } from "../runner/run_now.ts";
import type { RemoteRuns } from "../runner/remote_runs.ts";
import type { ProbeDefaults } from "../domain/probes.ts";

/** What a procedure may change about its HTTP answer. */
export interface ResponseControl {
  status?: number;
}

/** What the service offers procedures besides the database; absent where a process has none. */
export interface Services {
  /** The I'm alive reporter. */
  iamAlive?: IamAliveControl;
  /** Sends alert events to notification targets (the targets' test action). */
  notifier?: Notifier;
  /** Runs a probe once, now (`probes.run`). */
  runNow?: RunNow;
  /** The runner protocol: remote locations' claims and results (`runner.*`). */
  remoteRuns?: RemoteRuns;
  /** Header names (lower case) whose values read-only keys never see: `PROBE_SECRET_HEADERS`. */
  secretHeaders?: readonly string[];
  /**
   * The interval and timeout of probes without their own (`PROBE_INTERVAL_SECONDS`,
   * `PROBE_TIMEOUT_MS`): writes move a probe's schedule by them. The configuration's defaults
   * when absent.
   */
  probeDefaults?: ProbeDefaults;
  /** The kind of database the service uses, which `whoami` tells (`embedded` or `postgresql`). */
  databaseKind?: DatabaseHandle["kind"];
  /** `PUBLIC_URL`, where links (ping URLs) lead; the request's origin when absent. */
  publicUrl?: string;
  /** The heartbeats' clock (ms): the system's when absent; tests drive it. */
  heartbeatNow?: () => number;
  /**
   * The keys from the environment, as the keys list shows them (never the keys): none when
   * absent.
   */
  configuredKeys?: readonly Principal[];
  /** Dashboard sessions (`server/domain/access/sessions.ts`): the sessions API lists and ends them. */
  sessions?: Sessions;
}

/** The request facts of an audit entry, set by the HTTP edge (`Context.request`). */
export interface RequestFacts {
  address: string | null;
  userAgent: string | null;
  requestId: string;
}

/** What a mutation's step answers: tRPC's middleware result, told apart by `ok`. */
export interface StepResult {
  ok: boolean;
  data?: unknown;
}

/** A mutation's call, as the audit step (`audit.ts`) gets it. */
export interface AuditCall<R extends StepResult> {
  ctx: Context;
  /** The procedure's path (`probes.update`). */
  path: string;
  /** Its input, as the procedure validated it. */
  input: unknown;
  /** Runs the procedure with `db` as its database. */
  next: (db: Db) => Promise<R>;
}

/** Writes each mutation's audit entry with it (`audit.ts`, built by `createAuditor`). */
export interface Auditor {
  /** Runs a mutation with its audit entry; answers as the procedure's step does. */
  run<R extends StepResult>(call: AuditCall<R>): Promise<R>;
}

/** Everything a procedure needs; built without a request in tests. */
export interface Context extends Services {
  db: Db;
  /** Whether the request carried a valid API key (checked before tRPC runs). */
  authenticated: boolean;
  /**
   * Who is calling (`server/domain/principal.ts`), decided at the edge: its role decides what it
   * may do, its projects what it may see, its name what the audit log records.
   */
  principal: Principal;
  /**
   * What the request's key may do, decided by the HTTP layer from the key: `read` keys call
   * queries only (`apiProcedure` refuses their mutations with FORBIDDEN).
   */
  scope: Scope;
  /** The location of a location token (`scope: "location"`); absent for every other key. */
  location?: string;
  /** The request's origin (`https://host:port`), for links when `publicUrl` is absent. */
  origin?: string;
  res: ResponseControl;
  /**
   * Takes `cost` more of the calling key's rate-limit budget, below zero if need be: for work a
   * call causes beyond itself (run-now's redirect hops). Absent without a limit.
   */
  chargeKey?: (cost: number) => void;
  /**
   * What a tRPC batch's queries may still build (`server/procedures/answer_size.ts`); set by the HTTP
   * layer for the requests tRPC's own handler answers, absent everywhere else.
   */
  answerBudget?: AnswerBudget;
  /**
   * The most characters of JSON this call's answer may build (`MAX_ANSWER_BYTES`): set by REST
   * and the `/trpc` fast path for a single read that is not streamed, so that a list stops
   * reading once past it (`listMeter` in `pages.ts`).
   */
  answerLimit?: number;
  /**
   * Set for the pages of a whole list being streamed (`streamList` in `pages.ts`), which no
   * caller sees: a list of big items may end such a page after about this many stored
   * characters, with the cursor of the rest, so that a page is never read whole at 500 big items.
   */
  listPageChars?: number;
  /**
   * Where the request came from (address, user agent, request id), for the audit log; set by
   * the HTTP edge for REST, `/trpc` and its fast path, absent for in-process callers.
   */
  request?: RequestFacts;
  /**
   * Writes each mutation's audit entry with it (`audit.ts`); set by the HTTP edge. Without it
   * (in-process callers, the service's own), mutations leave no entry.
   */
  audit?: Auditor;
}

/**
 * Who an in-process caller that names no principal is: the service itself, as an admin (or a
 * viewer for a `read` scope), seeing every project.
 */
export function servicePrincipal(scope: Scope = "write"): Principal {
  return {
    source: "configured_key",
    name: "service",
    role: scope === "write" ? "admin" : "viewer",
    projects: scope === "location" ? [] : null,
  };
}

/**
 * The context of one call. Without a valid key it holds no database and no service: reaching
 * for any, or for the scope or the principal, fails with UNAUTHORIZED. (The HTTP layer refuses
 * such requests before tRPC runs; this keeps procedures safe from any other caller, without a
 * middleware level on every call.) The scope is `write` and the principal the service's own
 * unless the caller says otherwise (in-process callers are the service's own).
 */
export function createContext(
  { db, authenticated, scope = "write", principal, services = {}, chargeKey, location, origin }: {
    db: Db;
    origin?: string;
    authenticated: boolean;
    scope?: Scope;
    principal?: Principal;
    location?: string;
    services?: Services;
    chargeKey?: (cost: number) => void;
  },
): Context {
  if (authenticated) {
    return {
      db,
      authenticated,
      principal: principal ?? servicePrincipal(scope),
      scope,
      location,
      origin,
      res: {},
      chargeKey,
      ...services,
    };
  }
  const refuse = (): never => {
    throw new TRPCError({ code: "UNAUTHORIZED" });
  };
  return {
    authenticated,
    res: {},
    get db() {
      return refuse();
    },
    get scope() {
      return refuse();
    },
    get principal() {
      return refuse();
    },
    get iamAlive() {
      return refuse();
    },
    get notifier() {
      return refuse();
    },
    get runNow() {
      return refuse();
    },
  };
}
