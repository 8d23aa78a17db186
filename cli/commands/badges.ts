import { Command } from "commander";
import type { BadgeCreateResult, BadgeListResult } from "@probe/client";
import type { CliContext } from "../context.ts";
import { link, originOption, shieldsUrl } from "../links.ts";
import { table } from "../output.ts";

type BadgeWithToken = BadgeCreateResult["data"];

const whose = (b: { project: string; probe_id: string | null }) =>
  b.probe_id ? `probe ${b.probe_id} of ${b.project}` : `project ${b.project}`;

/** A new token's badges as full URLs and as Markdown, ready to paste into a README. */
const showToken = (verb: string, badge: BadgeWithToken, base: string) => {
  const url = (path: string) => link(base, path);
  const json = url(badge.urls.json);
  const urls = table(["BADGE", "URL"], [
    ["status", url(badge.urls.status_svg)],
    ["uptime", url(badge.urls.uptime_svg)],
    ["latency", url(badge.urls.latency_svg)],
    ["json", json],
    ["shields", shieldsUrl(json)],
  ]);
  return [
    `${verb} badge ${badge.id} for ${whose(badge)}.`,
    `Its token (badges list --json shows it again; badges rotate makes a new one): ${badge.token}`,
    "",
    urls,
    "",
    "Markdown (uptime and latency also take ?window=7d or 30d):",
    `![status](${url(badge.urls.status_svg)})`,
    `![uptime](${url(badge.urls.uptime_svg)})`,
    `![latency](${url(badge.urls.latency_svg)})`,
    `![status](${shieldsUrl(json)})`,
  ].join("\n");
};

const badgeRows = (badges: BadgeListResult["data"]) =>
  table(
    ["ID", "SCOPE", "PROBE_ID", "CREATED_AT", "ROTATED_AT"],
    badges.map((b) => [b.id, b.scope, b.probe_id, b.created_at, b.rotated_at]),
  );

/** `badges list|create|rotate|delete`: tokens that serve a probe's or a project's badges. */
export function badgesCommand(context: () => CliContext): Command {
  const badges = new Command("badges")
    .description(
      "Make, list, rotate and delete badge tokens; a token's badge URLs are printed when it is " +
        "made or rotated",
    );

  badges.command("list")
    .description("List a project's badge tokens, oldest first (--json: with tokens and URLs)")
    .argument("<project>", "project name")
    .action(async (project: string) => {
      const { client, out } = context();
      const result = await client().badges.list({ project });
      out.result(
        () =>
          result.data.length
            ? `${badgeRows(result.data)}\n` +
              "badges list --json holds each token and its URLs (null for one made before " +
              "tokens were kept: badges rotate <project> <id> once prints new ones)."
            : "No badges.",
        result,
      );
    });

  badges.command("create")
    .description(
      "Make a badge token for a probe, or for the whole project without a probe id, and print " +
        "its badge URLs",
    )
    .argument("<project>", "project name")
    .argument("[probeId]", "the probe whose badges it serves (default: the whole project's)")
    .addOption(originOption())
    .action(async (project: string, probeId: string | undefined, options: { origin?: string }) => {
      const { client, out, serviceUrl } = context();
      const result = await client().badges.create({ project, probe_id: probeId });
      out.result(() => showToken("Created", result.data, options.origin ?? serviceUrl), result);
    });

  badges.command("rotate")
    .description("Give a badge a new token and print its URLs; the old ones stop at once")
    .argument("<project>", "project name")
    .argument("<id>", "badge id")
    .addOption(originOption())
    .action(async (project: string, id: string, options: { origin?: string }) => {
      const { client, out, serviceUrl } = context();
      const result = await client().badges.rotate({ project, id });
      out.result(() => showToken("Rotated", result.data, options.origin ?? serviceUrl), result);
    });

  badges.command("delete")
    .description("Delete a badge token: its URLs stop serving")
    .argument("<project>", "project name")
    .argument("<id>", "badge id")
    .action(async (project: string, id: string) => {
      const { client, out } = context();
      await client().badges.delete({ project, id });
      out.result(
        () => `Deleted badge ${id} of ${project}: its URLs no longer serve.`,
        { data: { project, id, deleted: true } },
      );
    });

  return badges;
}
