import { Command } from "commander";
import type { Location, LocationWithTokenResult } from "@probe/client";
import type { CliContext } from "../context.ts";
import { table } from "../output.ts";

const locationRows = (locations: Location[]) =>
  table(
    ["NAME", "KIND", "LABEL", "PROBES", "RUNNERS", "LAST_SEEN", "VERSION", "CHECKS/MIN", "LAG_S"],
    locations.map((l) => [
      l.name,
      l.kind,
      l.label,
      String(l.probes),
      String(l.runners),
      l.last_seen_at,
      l.version,
      String(l.checks_per_minute),
      String(Math.round(l.lag_seconds * 10) / 10),
    ]),
  );

/** A new token, and how to start a runner with it. */
const showToken = (verb: string, l: LocationWithTokenResult["data"], serviceUrl: string) =>
  [
    `${verb} location ${l.name}. Its token, shown this once (locations rotate makes a new one):`,
    "",
    `  ${l.token}`,
    "",
    "Start a runner for it on a machine of that network (docs/locations.md):",
    `  SERVICE_URL=${serviceUrl} LOCATION_TOKEN=${l.token} deno task runner:remote`,
  ].join("\n");

/** `locations list|add|rotate|delete`: where probes run from (docs/locations.md). */
export function locationsCommand(context: () => CliContext): Command {
  const locations = new Command("locations")
    .description(
      "List, add, rotate and delete locations; a remote location's token is printed when it is " +
        "added or rotated",
    );

  locations.command("list")
    .description("List the locations with their runners' health (never the tokens)")
    .action(async () => {
      const { client, out } = context();
      const result = await client().locations.list();
      out.result(() => locationRows(result.data), result);
    });

  locations.command("add")
    .description("Add a remote location and print its token and how to start its runners")
    .argument("<name>", "location name (the rules of a project name)")
    .option("--label <text>", "a label for lists and messages")
    .action(async (name: string, options: { label?: string }) => {
      const { client, out, serviceUrl } = context();
      const result = await client().locations.create({ name, label: options.label });
      out.result(() => showToken("Added", result.data, serviceUrl), result);
    });

  locations.command("rotate")
    .description("Give a remote location a new token and print it; the old one stops at once")
    .argument("<name>", "location name")
    .action(async (name: string) => {
      const { client, out, serviceUrl } = context();
      const result = await client().locations.rotateToken({ location: name });
      out.result(() => showToken("Rotated", result.data, serviceUrl), result);
    });

  locations.command("delete")
    .description("Delete a remote location that no probe and no project default names")
    .argument("<name>", "location name")
    .action(async (name: string) => {
      const { client, out } = context();
      await client().locations.delete({ location: name });
      out.result(
        () => `Deleted location ${name}: its token no longer works.`,
        { data: { name, deleted: true } },
      );
    });

  return locations;
}
