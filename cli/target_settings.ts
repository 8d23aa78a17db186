/**
 * A notification target's settings as the CLI takes them: `--set NAME=VALUE` for what may be
 * seen, `--set-env NAME=VARIABLE` and `--set-file NAME=PATH` (`-`: stdin) for anything, and the
 * older `--url`, `--url-env`, `--secret-env`, `--recipients` that mean the same. A kind's secret
 * settings are never taken as command-line values: they end up in shell histories and process
 * lists. Which settings a kind has, and which are secrets, comes from `TARGET_KIND_SETTINGS`.
 */
import { InvalidArgumentError } from "commander";
import { TARGET_KIND_SETTINGS, type TargetSettingRule, targetSettingsOf } from "@probe/shared";
import { type CliContext, UsageError } from "./context.ts";
import { EXIT } from "./exit_codes.ts";
import { list } from "./options.ts";
import { readSecret } from "./secrets.ts";

/** Commander parser for repeated `NAME=VALUE` options, in the order given. */
export function assignment(value: string, previous: [string, string][] = []): [string, string][] {
  const equals = value.indexOf("=");
  const name = value.slice(0, equals).trim();
  if (equals <= 0 || !/^[a-z][a-z0-9_]*$/.test(name)) {
    throw new InvalidArgumentError("Expected SETTING=VALUE, such as chat_id=-1001234.");
  }
  return [...previous, [name, value.slice(equals + 1).trim()]];
}

export interface SettingOptions {
  url?: string;
  urlEnv?: string;
  urlFile?: string;
  secretEnv?: string;
  secretFile?: string;
  recipients?: string[];
  set?: [string, string][];
  setEnv?: [string, string][];
  setFile?: [string, string][];
}

/** Where one setting's value comes from. */
type Source = { name: string; value: string | string[] } | {
  name: string;
  env?: string;
  file?: string;
  /** The option that named it, for messages: `url` for `--url-env`, `set` for `--set-env`. */
  flag: string;
};

/** Every setting the options name, each once. */
export function settingSources(options: SettingOptions): Source[] {
  const sources: Source[] = [
    ...(options.url !== undefined ? [{ name: "url", value: options.url }] : []),
    ...(options.urlEnv !== undefined ? [{ name: "url", env: options.urlEnv, flag: "url" }] : []),
    ...(options.urlFile !== undefined ? [{ name: "url", file: options.urlFile, flag: "url" }] : []),
    ...(options.secretEnv !== undefined
      ? [{ name: "secret", env: options.secretEnv, flag: "secret" }]
      : []),
    ...(options.secretFile !== undefined
      ? [{ name: "secret", file: options.secretFile, flag: "secret" }]
      : []),
    ...(options.recipients !== undefined
      ? [{ name: "recipients", value: options.recipients }]
      : []),
    ...(options.set ?? []).map(([name, value]) => ({ name, value })),
    ...(options.setEnv ?? []).map(([name, env]) => ({ name, env, flag: "set" })),
    ...(options.setFile ?? []).map(([name, file]) => ({ name, file, flag: "set" })),
  ];
  const seen = new Set<string>();
  for (const { name } of sources) {
    if (seen.has(name)) throw new UsageError(`The setting ${name} is given twice`, EXIT.usage);
    seen.add(name);
  }
  if (sources.filter((s) => "file" in s && s.file === "-").length > 1) {
    throw new UsageError("Only one setting can be read from stdin", EXIT.usage);
  }
  return sources;
}

/** Whether the options give some setting's value on the command line itself. */
export const hasCommandLineValue = (sources: Source[]) => sources.some((s) => "value" in s);

/** A setting that is a secret of any kind (`token`), when its own kind does not say otherwise. */
const secretSomewhere = (name: string) =>
  Object.values(TARGET_KIND_SETTINGS).some((settings) =>
    (settings as Record<string, TargetSettingRule>)[name]?.secret
  );

/**
 * Refuses a secret setting of `kind` given as a command-line value, before anything is sent. A
 * name the kind does not have goes to the service, which names it in its 422, unless it is a
 * secret of another kind.
 */
export function refuseSecretValues(kind: string, sources: Source[]): void {
  const settings = targetSettingsOf(kind) ?? {};
  for (const source of sources) {
    if (!("value" in source)) continue;
    const rule = settings[source.name];
    if (!(rule ? rule.secret : secretSomewhere(source.name))) continue;
    throw new UsageError(
      source.name === "url"
        ? `A ${kind} URL is a credential: pass it with --url-env NAME or --url-file PATH ` +
          "(- for stdin), not on the command line"
        : `A ${kind} target's ${source.name} is a secret: pass it with --set-env ` +
          `${source.name}=NAME or --set-file ${source.name}=PATH (- for stdin), not on the ` +
          "command line",
      EXIT.usage,
    );
  }
}

/** The settings to send, secrets read from where the options say; a list split at commas. */
export async function readSettings(
  ctx: Pick<CliContext, "env" | "readTextFile">,
  sources: Source[],
): Promise<Record<string, string | string[]>> {
  const settings: Record<string, string | string[]> = {};
  for (const source of sources) {
    const value = "value" in source ? source.value : await readSecret(ctx, source);
    if (value === undefined) continue;
    settings[source.name] = source.name === "recipients" && typeof value === "string"
      ? list(value)
      : value;
  }
  return settings;
}

/** Each kind and its settings for `--help`: `*` a secret, `?` optional. */
export function kindsHelp(): string {
  const kinds = Object.entries(TARGET_KIND_SETTINGS);
  const width = Math.max(...kinds.map(([kind]) => kind.length));
  return kinds.map(([kind, settings]) =>
    `  ${kind.padEnd(width)}  ${
      Object.entries(settings as Record<string, TargetSettingRule>)
        .map(([name, rule]) => `${name}${rule.secret ? "*" : ""}${rule.required ? "" : "?"}`)
        .join(", ")
    }`
  ).join("\n");
}
