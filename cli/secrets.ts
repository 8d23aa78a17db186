/**
 * Secrets for the CLI (Slack and Discord URLs, webhook signing keys) come from an environment
 * variable named by a flag (`--url-env SLACK_URL`) or from a file (`-`: stdin), never as a
 * command-line value: arguments end up in shell histories and process lists.
 */
import { type CliContext, UsageError } from "./context.ts";
import { EXIT } from "./exit_codes.ts";

/** What an environment variable's name may look like (POSIX). */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Where one secret comes from: the options `--<flag>-env NAME` and `--<flag>-file PATH`. */
export interface SecretSource {
  /** The flag's stem, for messages: `url` or `secret`. */
  flag: string;
  env?: string;
  file?: string;
}

/**
 * Reads the secret a source names; undefined when it names none. An unset or empty variable, or
 * an unreadable or empty file, is a usage error naming the variable or the file, never the value.
 */
export async function readSecret(
  { env, readTextFile }: Pick<CliContext, "env" | "readTextFile">,
  source: SecretSource,
): Promise<string | undefined> {
  if (source.env !== undefined) {
    if (!ENV_NAME.test(source.env)) {
      throw new UsageError(
        `--${source.flag}-env takes the name of an environment variable, not "${
          source.env.length > 40 ? "its value" : source.env
        }"`,
        EXIT.usage,
      );
    }
    const value = env[source.env]?.trim();
    if (!value) {
      throw new UsageError(
        `The environment variable ${source.env} (--${source.flag}-env) is not set`,
        EXIT.usage,
      );
    }
    return value;
  }
  if (source.file !== undefined) {
    const where = source.file === "-" ? "stdin" : source.file;
    let text: string;
    try {
      text = await readTextFile(source.file);
    } catch (error) {
      throw new UsageError(`Cannot read ${where}: ${(error as Error).message}`, EXIT.usage);
    }
    const value = text.trim();
    if (!value) throw new UsageError(`${where} (--${source.flag}-file) is empty`, EXIT.usage);
    return value;
  }
  return undefined;
}
