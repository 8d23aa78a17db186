import { TRPCError } from "@trpc/server";
import type { Db } from "../db/database.ts";
import type { IamAliveControl } from "../iam_alive/reporter.ts";

/** What a procedure may change about its HTTP answer. */
export interface ResponseControl {
  status?: number;
}

/** Everything a procedure needs; built without a request in tests. */
export interface Context {
  db: Db;
  /** Whether the request carried a valid API key (checked before tRPC runs). */
  authenticated: boolean;
  res: ResponseControl;
  /** The I'm alive reporter, when this service runs one. */
  iamAlive?: IamAliveControl;
}

/**
 * The context of one call. Without a valid key it holds no database and no reporter: reaching
 * for either fails with UNAUTHORIZED. (The HTTP layer refuses such requests before tRPC runs;
 * this keeps procedures safe from any other caller, without a middleware level on every call.)
 */
export function createContext(
  { db, authenticated, iamAlive }: { db: Db; authenticated: boolean; iamAlive?: IamAliveControl },
): Context {
  if (authenticated) return { db, authenticated, res: {}, ...(iamAlive && { iamAlive }) };
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
  };
}
