import { Command } from "commander";
import type { Location, LocationWithToken } from "@probe/client";
import type { CliContext } from "../context.ts";
import { record, table } from "../output.ts";

/** How long ago a time was, for people: `12s ago`, `5m ago`, `3h ago`, `2d ago`; `-` if never. */
export function ago(iso: string | null, now = Date.now()): string {
  if (iso === null) return "-";
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 120) return `${s}s ago`;
  if (s < 7200) return `${Math.round(s / 60)}m ago`;
  if (s < 172_800) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86_400)}d ago`;
}

const locationRows = (locations: Location[]) =>
  table(
    ["NAME", "KIND", "LABEL", "PROBES", "RUNNERS", "LAST_SEEN", "VERSION", "CHECKS/MIN", "LAG_S"],
    locations.map((l) => [
      l.name,
      l.kind,
      l.label,
      l.probes,
      l.runners,
      ago(l.last_seen_at),
      l.version,
      l.checks_per_minute,
      l.lag_seconds,
    ]),
  );

/** A new token, with what to do with it: it is not shown again. */
const showToken = (verb: string, l: LocationWithToken, serviceUrl: string) =>
  [
    `${verb} location ${l.name}.`,
    `Its token, shown this once (locations rotate ${l.name} makes a new one):`,
    "",
    `  ${l.token}`,
    "",
    "Start its runners with it from a checkout of the service (docs/locations.md has a systemd",
    "unit); PROBE_ALLOW_NETWORKS names the private ranges its probes may reach (10.0.0.0/8):",
    `  SERVICE_URL=${serviceUrl} LOCATION_TOKEN=${l.token} PROBE_ALLOW_NETWORKS= \\`,
    "    deno task runner:remote",
  ].join("\n");

/**
 * `locations list|show|add|update|rotate|delete`: the places probes run from. The built-in one
 * (`local`) is always there; a remote one's token is printed when it is made or rotated.
 */
export function locationsCommand(context: () => CliContext): Command {
  const locations = new Command("locations")
    .description(
      "List the places probes run from with their runners' health; add, rotate and delete " +
        "remote locations (a token is printed once, when made or rotated)",
    );

  locations.command("list")
    .description(
      "List locations (built-in first): kind, probes, runners seen in the last minute, last " +
        "seen, version, checks per minute and schedule lag",
    )
    .action(async () => {
      const { client, out } = context();
      const result = await client().locations.list();
      out.result(() => locationRows(result.data), result);
    });

  locations.command("show")
    .description("Show one location")
    .argument("<location>", "location name")
    .action(async (location: string) => {
      const { client, out } = context();
      const result = await client().locations.get({ location });
      out.result(() => record(result.data), result);
    });

  locations.command("add")
    .description("Add a remote location and print its token (shown this once)")
    .argument("<name>", "its name (the rules of a project name)")
    .option("--label <text>", "a name for people")
    .action(async (name: string, options: { label?: string }) => {
      const { client, out, serviceUrl } = context();
      const result = await client().locations.create({ name, label: options.label });
      out.result(() => showToken("Added", result.data, serviceUrl), result);
    });

  locations.command("update")
    .description("Change a remote location's label")
    .argument("<location>", "location name")
    .option("--label <text>", "a name for people")
    .option("--no-label", "clear the label")
    .action(async (location: string, options: { label?: string | false }) => {
      const { client, out } = context();
      const label = options.label === false ? null : options.label;
      const result = await client().locations.update({ location, label });
      out.result(() => `Updated location ${location}.`, result);
    });

  locations.command("rotate")
    .description("Give a remote location a new token and print it; the old one stops at once")
    .argument("<location>", "location name")
    .action(async (location: string) => {
      const { client, out, serviceUrl } = context();
      const result = await client().locations.rotateToken({ location });
      out.result(() => showToken("Rotated the token of", result.data, serviceUrl), result);
    });

  locations.command("delete")
    .description(
      "Delete a remote location no probe or project default names (its results stay until " +
        "the retention)",
    )
    .argument("<location>", "location name")
    .action(async (location: string) => {
      const { client, out } = context();
      await client().locations.delete({ location });
      out.result(
        () => `Deleted location ${location}: its token no longer works.`,
        { data: { location, deleted: true } },
      );
    });

  return locations;
}
