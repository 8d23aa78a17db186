import { Argument, Command, Option } from "commander";
import type { NotificationTarget, TargetKind } from "@probe/client";
import { MASKED_WEBHOOK_SECRET, TARGET_KINDS, targetSettingsOf } from "@probe/shared";
import type { CliContext } from "../context.ts";
import { list } from "../options.ts";
import { record, table } from "../output.ts";
import {
  assignment,
  hasCommandLineValue,
  kindsHelp,
  readSettings,
  refuseSecretValues,
  type SettingOptions,
  settingSources,
} from "../target_settings.ts";

/** What every target shows in its own column, whatever its kind. */
const COMMON = ["name", "kind", "url", "recipients", "secret", "created_at", "updated_at"];

/** A kind's other settings as read (secrets masked), in its kind's order. */
function otherSettings(t: NotificationTarget): [string, unknown][] {
  const read = t as NotificationTarget & Record<string, unknown>;
  return Object.keys(targetSettingsOf(t.kind) ?? {})
    .filter((name) => !COMMON.includes(name) && read[name] !== undefined)
    .map((name) => [name, read[name]]);
}

const targetRows = (targets: NotificationTarget[]) =>
  table(
    ["NAME", "KIND", "URL", "RECIPIENTS", "SECRET", "SETTINGS"],
    targets.map((t) => [
      t.name,
      t.kind,
      t.url,
      t.recipients?.join(", "),
      t.secret,
      otherSettings(t).map(([name, value]) => `${name}=${value}`).join(", ") || undefined,
    ]),
  );

const show = (t: NotificationTarget) =>
  record({
    name: t.name,
    kind: t.kind,
    url: t.url,
    ...(t.recipients && { recipients: t.recipients.join(", ") }),
    secret: t.secret,
    ...Object.fromEntries(otherSettings(t)),
    created_at: t.created_at,
    updated_at: t.updated_at,
  });

/** The options both create and update take. */
function withFieldOptions(command: Command): Command {
  return command
    .addOption(
      new Option("--set <setting=value>", "a setting that is not a secret (repeat it)")
        .argParser(assignment),
    )
    .addOption(
      new Option(
        "--set-env <setting=name>",
        "a setting read from this environment variable (repeat it)",
      ).argParser(assignment),
    )
    .addOption(
      new Option("--set-file <setting=path>", "a setting read from this file, - for stdin")
        .argParser(assignment),
    )
    .addOption(
      new Option("--url <url>", "the same as --set url=… (not where the URL is a secret)")
        .conflicts(["urlEnv", "urlFile"]),
    )
    .addOption(
      new Option("--url-env <name>", "the same as --set-env url=…").conflicts("urlFile"),
    )
    .option("--url-file <path>", "the same as --set-file url=…")
    .addOption(
      new Option("--secret-env <name>", "a webhook's signing key (whsec_…) from this variable")
        .conflicts("secretFile"),
    )
    .option("--secret-file <path>", "a webhook's signing key from this file (- for stdin)")
    .option("--recipients <list>", "comma-separated mail addresses (mail)", list)
    .addHelpText(
      "after",
      `
Kinds and their settings (* a secret, ? optional; \`targets kinds\` shows each one's help and
defaults):
${kindsHelp()}

Secrets are never taken as command-line values: they come from an environment variable
(--set-env bot_token=TELEGRAM_TOKEN, --url-env, --secret-env) or a file (--set-file, --url-file,
--secret-file; - reads stdin). They are never printed, except the signing key the service
generates for a webhook created without one: create prints it once. For example:
  targets create oncall pagerduty --set-env routing_key=PD_ROUTING_KEY
  targets create phones telegram --set-env bot_token=TG_TOKEN --set chat_id=-1001234567890`,
    );
}

/** The settings to send; a secret given as a value is refused before anything is sent. */
async function fields(ctx: CliContext, options: SettingOptions, kind: () => Promise<string>) {
  const sources = settingSources(options);
  if (hasCommandLineValue(sources)) refuseSecretValues(await kind(), sources);
  return await readSettings(ctx, sources);
}

/** `targets list|get|create|update|delete|test`: where alerts go. */
export function targetsCommand(context: () => CliContext): Command {
  const targets = new Command("targets")
    .description(
      `Manage notification targets: ${TARGET_KINDS.join(", ")} (and the built-in log)`,
    );

  targets.command("list")
    .description("List the notification targets, log first; secrets masked")
    .action(async () => {
      const { client, out } = context();
      const result = await client().targets.list();
      out.result(() => targetRows(result.data), result);
    });

  targets.command("get")
    .description("Show one notification target; secrets masked")
    .argument("<name>", "target name")
    .action(async (name: string) => {
      const { client, out } = context();
      const result = await client().targets.get({ name });
      out.result(() => show(result.data), result);
    });

  withFieldOptions(
    targets.command("create")
      .description(
        "Create a notification target; a webhook without a key gets one, printed this once",
      )
      .argument("<name>", "target name: letters, digits, '.', '_', '-' (not log, mail, webhook)")
      .addArgument(new Argument("<kind>", "what it is").choices(TARGET_KINDS)),
  ).action(async (name: string, kind: TargetKind, options: SettingOptions) => {
    const ctx = context();
    const input = await fields(ctx, options, () => Promise.resolve(kind));
    const result = await ctx.client().targets.create({ name, kind, ...input });
    const { data } = result;
    const generated = kind === "webhook" && input.secret === undefined && data.secret !== null &&
      data.secret !== MASKED_WEBHOOK_SECRET;
    ctx.out.result(
      () =>
        `Created ${data.kind} target ${data.name}.` +
        (generated
          ? `\nIts signing key, shown this once (keep it now; verify the webhook-signature ` +
            `header with it):\n${data.secret}`
          : ""),
      result,
    );
  });

  withFieldOptions(
    targets.command("update")
      .description("Change the settings given; the others stay, and the kind cannot change")
      .argument("<name>", "target name"),
  ).action(async (name: string, options: SettingOptions) => {
    const ctx = context();
    const kind = async () => (await ctx.client().targets.get({ name })).data.kind;
    const result = await ctx.client().targets.update({
      name,
      ...await fields(ctx, options, kind),
    });
    ctx.out.result(() => `Updated ${result.data.kind} target ${result.data.name}.`, result);
  });

  targets.command("delete")
    .description("Delete a notification target (refused while an alert policy names it)")
    .argument("<name>", "target name")
    .action(async (name: string) => {
      const { client, out } = context();
      await client().targets.delete({ name });
      out.result(() => `Deleted target ${name}.`, { data: { name, deleted: true } });
    });

  targets.command("test")
    .description("Send one test notification to a target now and show how it went")
    .argument("<name>", "target name (log too)")
    .action(async (name: string) => {
      const { client, out } = context();
      const result = await client().targets.test({ name });
      const d = result.data;
      out.result(
        () =>
          table(["TARGET", "OUTCOME", "ATTEMPTS", "ERROR"], [[
            d.target,
            d.outcome,
            d.attempts,
            d.error,
          ]]),
        result,
      );
    });

  targets.command("kinds")
    .description("List the kinds of target the service has, each with its settings")
    .action(async () => {
      const { client, out } = context();
      const result = await client().targets.kinds();
      out.result(
        () =>
          table(
            ["KIND", "SETTING", "REQUIRED", "SECRET", "DEFAULT", "HELP"],
            result.data.flatMap((k) =>
              k.fields.map((f) => [
                k.kind,
                f.name,
                f.required ? "yes" : "no",
                f.secret ? "yes" : "no",
                f.default,
                f.help,
              ])
            ),
          ),
        result,
      );
    });

  return targets;
}
