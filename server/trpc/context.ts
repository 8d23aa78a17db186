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

export function createContext(
  { db, authenticated, iamAlive }: { db: Db; authenticated: boolean; iamAlive?: IamAliveControl },
): Context {
  return { db, authenticated, res: {}, ...(iamAlive && { iamAlive }) };
}
