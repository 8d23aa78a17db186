import { Command } from "commander";
import { type CliContext, UsageError } from "../context.ts";
import { EXIT } from "../exit_codes.ts";
import { table } from "../output.ts";
import { applySeed, parseSeedFile, SeedFileError } from "../seed.ts";

/** `import <file>`: loads a monitoring setup from a JSON or YAML file. */
export function importCommand(context: () => CliContext): Command {
  return new Command("import")
    .description(
      "Load remote locations, notification targets, alert policies, projects, their probes, maintenance windows " +
        "and status pages, and the I'm alive settings from a JSON or YAML file (`export` writes " +
        "one); running it again changes nothing",
    )
    .argument("<file>", "the seed file (.json, .yaml or .yml; - reads stdin)")
    .option(
      "--prune",
      "delete the probes (and, where it lists maintenance, the windows) of the file's projects " +
        "that the file does not list",
    )
    .option("--dry-run", "show what would change, change nothing")
    .option(
      "--update-secrets",
      "also write the secrets of targets that exist already (secrets cannot be read back, so " +
        "they are not compared)",
    )
    .addHelpText(
      "after",
      `
File format (YAML; JSON has the same shape):
  locations:                       # remote ones; created when missing (token printed once)
    - { name: office, label: Office LAN }
  targets:                         # created when missing, else updated to match
    - { name: ops-hook, kind: webhook, url: https://hooks.example.com/a, secret_env: HOOK_KEY }
    - { name: team-slack, kind: slack, url_env: SLACK_URL }
    - { name: oncall, kind: mail, recipients: [oncall@example.com] }
    - { name: pager, kind: pagerduty, routing_key_env: PD_ROUTING_KEY }
    - { name: phones, kind: telegram, bot_token_env: TG_TOKEN, chat_id: "-1001234567890" }
  alerts: { targets: [log, team-slack], failure_threshold: 3 }   # the global policy
  projects:
    - project: shop                # created when missing, else updated to match
      label: Web shop
      status: enabled
      default_locations: [local, office]   # where its probes run unless they say
      alerts: { failure_threshold: 1, reminder_minutes: null }  # overrides; null inherits
      probes:                      # one per URL; created, rewritten when different
        - url: https://shop.example.com/health
          method: GET
          headers: { accept: application/json }
          latency: 800
          label: Shop health
          expect: { status: [2xx], json: [{ path: /status, op: eq, value: UP }] }
          locations: [office]      # this probe runs from office only
        - url: https://shop.example.com/api/orders
          headers_env: { Authorization: SHOP_API_AUTH }   # a secret header's variable
          depends_on: [2c6f1a0e9b3d4f57]  # probe ids (probes list); its alerts wait while one is down
      status_page: { public: true, title: Shop status }
      maintenance:                 # created when missing; --prune deletes those not listed
        - { starts_at: "2026-12-01T02:00:00Z", ends_at: "2026-12-01T04:00:00Z", reason: Upgrade }
  settings:
    iam_alive: { enabled: true, interval_hours: 6, channels: [log] }

Secrets are never in the file: a target's setting NAME_env names the environment variable that
holds it (url_env for a Slack URL, secret_env for a webhook's signing key, routing_key_env, …;
\`targets create --help\` lists each kind's settings, secrets marked *), headers_env those of a
probe's secret headers. An unset variable stops the import before any change. A webhook created without secret_env gets a key from the service, printed this once.`,
    )
    .action(async (
      file: string,
      options: { prune?: boolean; dryRun?: boolean; updateSecrets?: boolean },
    ) => {
      const { client, out, readTextFile, env } = context();
      let text: string;
      try {
        text = await readTextFile(file);
      } catch (error) {
        throw new UsageError(`Cannot read ${file}: ${(error as Error).message}`, EXIT.usage);
      }
      let steps;
      try {
        const seed = parseSeedFile(text, file);
        steps = await applySeed(client(), seed, { ...options, env });
      } catch (error) {
        if (error instanceof SeedFileError) throw new UsageError(error.message, EXIT.usage);
        throw error;
      }
      const count = (action: string) => steps.filter((s) => s.action === action).length;
      const summary = Object.fromEntries(
        ["created", "updated", "rewritten", "deleted", "unchanged"].map((a) => [a, count(a)]),
      );
      const keys = [
        ...steps.filter((s) => s.secret !== undefined).map((s) =>
          `Signing key of webhook target ${s.target}, shown this once (keep it now):\n${s.secret}`
        ),
        ...steps.filter((s) => s.token !== undefined).map((s) =>
          `Token of location ${s.target}, shown this once (its runners' LOCATION_TOKEN; ` +
          `locations rotate ${s.target} makes a new one):\n${s.token}`
        ),
      ];
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
            ...(keys.length ? ["", ...keys] : []),
            ...steps.flatMap((s) => s.note ? ["", `Note: ${s.note}.`] : []),
          ].join("\n"),
        { data: steps, meta: { ...summary, dry_run: Boolean(options.dryRun) } },
      );
    });
}
