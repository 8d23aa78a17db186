import { Argument, Command, Option } from "commander";
import type { NotificationTarget, TargetKind } from "@probe/client";
import { MASKED_WEBHOOK_SECRET } from "@probe/shared";
import { type CliContext, UsageError } from "../context.ts";
import { EXIT } from "../exit_codes.ts";
import { list } from "../options.ts";
import { record, table } from "../output.ts";
import { readSecret } from "../secrets.ts";

const KINDS: TargetKind[] = ["webhook", "slack", "discord", "mail"];

/** Kinds whose whole URL is the credential: shown masked, never taken on the command line. */
const CHAT_KINDS: string[] = ["slack", "discord"];

const targetRows = (targets: NotificationTarget[]) =>
  table(
    ["NAME", "KIND", "URL", "RECIPIENTS", "SECRET"],
    targets.map((t) => [t.name, t.kind, t.url, t.recipients?.join(", "), t.secret]),
  );

const show = (t: NotificationTarget) =>
  record({
    name: t.name,
    kind: t.kind,
    url: t.url,
    ...(t.recipients && { recipients: t.recipients.join(", ") }),
    secret: t.secret,
    created_at: t.created_at,
    updated_at: t.updated_at,
  });

const credentialOnCommandLine = (kind: string) =>
  new UsageError(
    `A ${kind} URL is a credential: pass it with --url-env NAME or --url-file PATH ` +
      "(- for stdin), not on the command line",
    EXIT.usage,
  );

interface FieldOptions {
  url?: string;
  urlEnv?: string;
  urlFile?: string;
  secretEnv?: string;
  secretFile?: string;
  recipients?: string[];
}

/** The options both create and update take. */
function withFieldOptions(command: Command): Command {
  return command
    .addOption(
      new Option("--url <url>", "the webhook's URL (not for slack or discord: see below)")
        .conflicts(["urlEnv", "urlFile"]),
    )
    .addOption(
      new Option("--url-env <name>", "read the URL from this environment variable")
        .conflicts("urlFile"),
    )
    .option("--url-file <path>", "read the URL from this file (- for stdin)")
    .addOption(
      new Option(
        "--secret-env <name>",
        "read the webhook's signing key (whsec_…) from this environment variable",
      ).conflicts("secretFile"),
    )
    .option("--secret-file <path>", "read the webhook's signing key from this file (- for stdin)")
    .option("--recipients <list>", "comma-separated mail addresses (mail)", list)
    .addHelpText(
      "after",
      `
Secrets are never taken as command-line values: a Slack or Discord URL (the whole URL is the
credential) and a webhook's signing key come from an environment variable named by --url-env or
--secret-env, or from a file (--url-file, --secret-file; - reads stdin). They are never printed,
except the signing key the service generates for a webhook created without one: create prints it
once.`,
    );
}

/** The fields to send, secrets read from where the options say. */
async function fields(ctx: CliContext, options: FieldOptions) {
  if (options.urlFile === "-" && options.secretFile === "-") {
    throw new UsageError("Only one of --url-file and --secret-file can read stdin", EXIT.usage);
  }
  const url = options.url ??
    await readSecret(ctx, { flag: "url", env: options.urlEnv, file: options.urlFile });
  const secret = await readSecret(ctx, {
    flag: "secret",
    env: options.secretEnv,
    file: options.secretFile,
  });
  return {
    ...(url !== undefined && { url }),
    ...(secret !== undefined && { secret }),
    ...(options.recipients !== undefined && { recipients: options.recipients }),
  };
}

/** `targets list|get|create|update|delete|test`: where alerts go. */
export function targetsCommand(context: () => CliContext): Command {
  const targets = new Command("targets")
    .description(
      "Manage notification targets: webhook, slack, discord, mail (and the built-in log)",
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
      .addArgument(new Argument("<kind>", "what it is").choices(KINDS)),
  ).action(async (name: string, kind: TargetKind, options: FieldOptions) => {
    const ctx = context();
    if (options.url !== undefined && CHAT_KINDS.includes(kind)) {
      throw credentialOnCommandLine(kind);
    }
    const input = await fields(ctx, options);
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
      .description("Change a target's URL, signing key or recipients; the kind cannot change")
      .argument("<name>", "target name"),
  ).action(async (name: string, options: FieldOptions) => {
    const ctx = context();
    if (options.url !== undefined) {
      const { kind } = (await ctx.client().targets.get({ name })).data;
      if (CHAT_KINDS.includes(kind)) throw credentialOnCommandLine(kind);
    }
    const result = await ctx.client().targets.update({ name, ...await fields(ctx, options) });
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

  return targets;
}
