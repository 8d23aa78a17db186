import { TRPCError } from "@trpc/server";
import type { Db } from "../db/database.ts";
import type { IamAliveControl } from "../iam_alive/reporter.ts";
import type { Notifier } from "../notify/targets.ts";
import type { RunNow } from "../runner/run_now.ts";

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
}

/** Everything a procedure needs; built without a request in tests. */
export interface Context extends Services {
  db: Db;
  /** Whether the request carried a valid API key (checked before tRPC runs). */
  authenticated: boolean;
  res: ResponseControl;
}

/**
 * The context of one call. Without a valid key it holds no database and no service: reaching
 * for any fails with UNAUTHORIZED. (The HTTP layer refuses such requests before tRPC runs;
 * this keeps procedures safe from any other caller, without a middleware level on every call.)
 */
export function createContext(
  { db, authenticated, services = {} }: { db: Db; authenticated: boolean; services?: Services },
): Context {
  if (authenticated) return { db, authenticated, res: {}, ...services };
  const refuse = (): never => {
    throw new TRPCError({ code: "UNAUTHORIZED" });
  };
  return {
    authenticated,
    res: {},
    get db() {
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
