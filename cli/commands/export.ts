import { Command, Option } from "commander";
import { type CliContext, UsageError } from "../context.ts";
import { EXIT } from "../exit_codes.ts";
import { exportSeed, renderSeed } from "../export.ts";
import { table } from "../output.ts";

/** `export`: the service's configuration as a seed file, for `import` (`deno task seed`). */
export function exportCommand(context: () => CliContext): Command {
  return new Command("export")
    .description(
      "Write the configuration (projects, probes, maintenance windows, status pages, alert " +
        "policies, notification targets, I'm alive settings) as a seed file for import; " +
        "secrets are replaced by the names of environment variables",
    )
    .addOption(
      new Option("--format <format>", "yaml, or json (the default with --json)")
        .choices(["yaml", "json"]),
    )
    .option("--output <file>", "write the file there instead of to stdout")
    .option(
      "--header-values",
      "write the values of secret-looking probe headers (Authorization, Cookie, …) into the " +
        "file instead of naming environment variables for them (a write key's export only: " +
        "a read-only key reads them masked)",
    )
    .addHelpText(
      "after",
      `
Not exported: results, incidents, deliveries, badge and status page tokens.
Load the file elsewhere with: deno task seed --prune <file> (after setting the variables the
export lists on stderr). Variables are named PROBE_TARGET_<NAME>_URL and _SECRET for targets,
PROBE_HEADER_<PROJECT>_<PROBE_ID>_<HEADER> for secret headers.`,
    )
    .action(async (
      options: { format?: "yaml" | "json"; output?: string; headerValues?: boolean },
    ) => {
      const { client, out, stdout, writeTextFile } = context();
      const format = options.format ?? (out.json ? "json" : "yaml");
      const exported = await exportSeed(client(), { headerValues: options.headerValues });
      const text = renderSeed(exported, format);
      if (options.output === undefined || options.output === "-") {
        stdout(text);
      } else {
        try {
          await writeTextFile(options.output, text);
        } catch (error) {
          throw new UsageError(
            `Cannot write ${options.output}: ${(error as Error).message}`,
            EXIT.usage,
          );
        }
        const { projects, probes, targets, windows, locations, heartbeats } = exported.counts;
        out.error(
          `Wrote ${options.output}: ${projects} projects, ${probes} probes, ` +
            `${heartbeats} heartbeats, ${windows} maintenance windows, ` +
            `${targets} notification targets, ${locations} remote locations (without their ` +
            "tokens or the heartbeats' ping URLs).",
        );
      }
      if (exported.maskedUrls.length > 0) {
        out.error(
          `${exported.maskedUrls.length} probe URLs hold credentials masked for this read-only ` +
            "key (****): export with a write key to load them elsewhere.",
        );
      }
      if (exported.variables.length > 0) {
        out.error(
          "To load it elsewhere, set these environment variables (their values are not in the " +
            "file):",
        );
        out.error(
          table(["VARIABLE", "HOLDS"], exported.variables.map((v) => [v.name, v.holds])),
        );
      }
    });
}
