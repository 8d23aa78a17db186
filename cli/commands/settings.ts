import { Command, Option } from "commander";
import type { IamAliveSettings, IamAliveUpdateInput } from "@probe/client";
import type { CliContext } from "../context.ts";
import { integer, list } from "../options.ts";
import { record, table } from "../output.ts";

const show = (s: IamAliveSettings) =>
  record({ enabled: s.enabled, interval_hours: s.interval_hours, channels: s.channels.join(", ") });

/** `settings get|set`: the global I'm alive reporting settings. */
export function settingsCommand(context: () => CliContext): Command {
  const settings = new Command("settings").description("Read and change the I'm alive settings");

  settings.command("get")
    .description("Show the I'm alive settings")
    .action(async () => {
      const { client, out } = context();
      const result = await client().settings.getIamAlive();
      out.result(() => show(result.data), result);
    });

  settings.command("set")
    .description(
      "Change the I'm alive settings; --interval-hours or --channels alone also enable reporting",
    )
    .addOption(new Option("--enable", "turn reporting on").conflicts("disable"))
    .addOption(new Option("--disable", "turn reporting off"))
    .option("--interval-hours <hours>", "hours between reports, 1 to 24", integer)
    .option("--channels <list>", "comma-separated: mail, log, webhook", list)
    .action(async (
      options: { enable?: true; disable?: true; intervalHours?: number; channels?: string[] },
    ) => {
      const { client, out } = context();
      const input: IamAliveUpdateInput = {
        enabled: options.enable ? true : options.disable ? false : undefined,
        interval_hours: options.intervalHours,
        channels: options.channels as IamAliveUpdateInput["channels"],
      };
      const result = await client().settings.updateIamAlive(input);
      out.result(() => show(result.data), result);
    });

  settings.command("test")
    .description("Send one I'm alive report now over the selected channels, enabled or not")
    .action(async () => {
      const { client, out } = context();
      const result = await client().settings.testIamAlive();
      out.result(
        () =>
          `Sent report #${result.data.report.sequence}.\n` +
          table(
            ["CHANNEL", "OUTCOME", "ATTEMPTS", "ERROR"],
            result.data.deliveries.map((d) => [d.channel, d.outcome, d.attempts, d.error]),
          ),
        result,
      );
    });

  settings.command("deliveries")
    .description("List recent I'm alive deliveries, newest first")
    .option("--limit <n>", "how many, 1 to 500 (default 50)", integer)
    .action(async (options: { limit?: number }) => {
      const { client, out } = context();
      const result = await client().settings.listIamAliveDeliveries({ limit: options.limit });
      out.result(
        () =>
          result.data.length
            ? table(
              ["TIME", "SEQUENCE", "TRIGGER", "CHANNEL", "OUTCOME", "ERROR"],
              result.data.map((
                d,
              ) => [d.time, d.sequence, d.trigger, d.channel, d.outcome, d.error]),
            )
            : "No deliveries.",
        result,
      );
    });

  return settings;
}
