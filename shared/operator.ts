/**
 * Where the operator's commands (`deno task cli`, `deno task backup`) look for the service and
 * its API key when they are told nothing, and what they say when there is no key. The service
 * listens at `http://127.0.0.1:8000` and keeps its data in `./data` by default (`PORT`, `HOST`,
 * `DATA_DIR`); a first start without `SERVICE_API_KEY` saves a key in `DATA_DIR/api-key`, and
 * names these defaults in the note it prints (`server/domain/access/api_key.ts`).
 *
 * @module
 */

/** The service's root URL when neither `--url` nor `PROBE_SERVICE_URL` says otherwise. */
export const DEFAULT_SERVICE_URL = "http://127.0.0.1:8000";
/** The service's data folder when `DATA_DIR` is not set. */
export const DEFAULT_DATA_DIR = "./data";

/** The environment variables a command reads. */
export type OperatorEnv = Record<string, string | undefined>;

/** The service's root URL: the one given, else `PROBE_SERVICE_URL`, else the default. */
export function serviceUrlOf(given: string | undefined, env: OperatorEnv): string {
  return given || env.PROBE_SERVICE_URL || DEFAULT_SERVICE_URL;
}

/** The service's data folder: `DATA_DIR`, else the default. */
export function dataDirOf(env: OperatorEnv): string {
  return env.DATA_DIR || DEFAULT_DATA_DIR;
}

/**
 * The API key a command uses when none is given: the first of `SERVICE_API_KEY` (a list), else
 * the key a first start saved in `DATA_DIR/api-key`; undefined when there is neither.
 */
export async function operatorApiKey(
  env: OperatorEnv,
  readTextFile: (path: string) => Promise<string>,
): Promise<string | undefined> {
  const fromEnv = env.SERVICE_API_KEY?.split(",").map((k) => k.trim()).find((k) => k);
  if (fromEnv) return fromEnv;
  try {
    return (await readTextFile(`${dataDirOf(env)}/api-key`)).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Why a command cannot call the service without a key, and the three ways to give one. */
export function noApiKeyMessage(env: OperatorEnv, more = ""): string {
  return "No API key: set SERVICE_API_KEY, pass --api-key, or set DATA_DIR to the service's " +
    `data folder (no ${dataDirOf(env)}/api-key here${more})`;
}
