import { Command } from "commander";
import { type CliContext, UsageError } from "../context.ts";
import { EXIT } from "../exit_codes.ts";
import { table } from "../output.ts";
import { applySeed, parseSeedFile, SeedFileError } from "../seed.ts";

/** `import <file>`: loads projects, probes and settings from a JSON or YAML file. */
export function importCommand(context: () => CliContext): Command {
  return new Command("import")
    .description(
      "Load projects, their probes and the I'm alive settings from a JSON or YAML file; " +
        "running it again changes nothing",
    )
    .argument("<file>", "the seed file (.json, .yaml or .yml)")
    .option("--prune", "delete the probes of the file's projects that the file does not list")
    .option("--dry-run", "show what would change, change nothing")
    .addHelpText(
      "after",
      `
File format (YAML; JSON has the same shape):
  projects:
    - project: shop                # created when missing, else updated to match
      label: Web shop
      status: enabled
      probes:                      # one per URL; created, rewritten when different
        - url: https://shop.example.com/health
          method: GET
          headers: { accept: application/json }
          latency: 800
  settings:
    iam_alive: { enabled: true, interval_hours: 6, channels: [log] }`,
    )
    .action(async (file: string, options: { prune?: boolean; dryRun?: boolean }) => {
      const { client, out, readTextFile } = context();
      let text: string;
      try {
        text = await readTextFile(file);
      } catch (error) {
        throw new UsageError(`Cannot read ${file}: ${(error as Error).message}`, EXIT.usage);
      }
      let seed;
      try {
        seed = parseSeedFile(text, file);
      } catch (error) {
        if (error instanceof SeedFileError) throw new UsageError(error.message, EXIT.usage);
        throw error;
      }
      const steps = await applySeed(client(), seed, options);
      const count = (action: string) => steps.filter((s) => s.action === action).length;
      const summary = Object.fromEntries(
        ["created", "updated", "rewritten", "deleted", "unchanged"].map((a) => [a, count(a)]),
      );
      out.result(
        () =>
          [
            table(
              ["KIND", "PROJECT", "TARGET", "ACTION"],
              steps.map((s) => [s.kind, s.project, s.target, s.action]),
            ),
            "",
            `${options.dryRun ? "Would have: " : ""}${
              Object.entries(summary).map(([a, n]) => `${n} ${a}`).join(", ")
            }.`,
          ].join("\n"),
        { data: steps, meta: { ...summary, dry_run: Boolean(options.dryRun) } },
      );
    });
}
