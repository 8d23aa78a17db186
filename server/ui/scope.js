// @ts-check
/**
 * What the signed-in key may do (`GET /api/v1/whoami`): `write`, or `read` for a key of
 * `SERVICE_API_KEYS_READONLY`. Pages show the controls that change something only to a key that
 * may write; a read-only key sees the same pages without them.
 */
import { createContext } from "preact";
import { useContext } from "preact/hooks";
/** @import { Scope } from "./api.js" */

export const ScopeContext = createContext(/** @type {Scope} */ ("read"));

/** Whether the signed-in key may create, change, run or delete. */
export const useCanWrite = () => useContext(ScopeContext) === "write";
