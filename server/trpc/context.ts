import type { Db } from "../db/database.ts";

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
}

export function createContext(
  { db, authenticated }: { db: Db; authenticated: boolean },
): Context {
  return { db, authenticated, res: {} };
}
