import { Command, InvalidArgumentError } from "commander";
import type {
  AlertPolicy,
  AlertPolicyUpdateInput,
  ProjectAlerts,
  ProjectAlertsUpdateInput,
} from "@probe/client";
import { type CliContext, UsageError } from "../context.ts";
import { EXIT } from "../exit_codes.ts";
import { integer, list } from "../options.ts";
import { record, table } from "../output.ts";

/** The word that sends `null`: the project's field inherits the global policy's again. */
const INHERIT = "inherit";

const FIELDS = [
  "enabled",
  "targets",
  "failure_threshold",
  "success_threshold",
  "reminder_minutes",
  "notify_degraded",
  "notify_recovered",
  "location_quorum",
  "escalation",
  "flap_changes",
  "flap_minutes",
] as const satisfies readonly (keyof AlertPolicy)[];

type Steps = AlertPolicy["escalation"];

/** Escalation steps as `--escalation` takes them: `10=pager;30=cto,ops`, or `none`. */
const stepsShown = (steps: Steps) =>
  steps.length === 0
    ? "none"
    : steps.map((s) => `${s.after_minutes}=${s.targets.join(",")}`).join(";");

const shown = (field: (typeof FIELDS)[number], value: unknown) =>
  field === "escalation" && value !== null
    ? stepsShown(value as Steps)
    : Array.isArray(value)
    ? value.join(", ")
    : value;

const showPolicy = (p: AlertPolicy) =>
  record(Object.fromEntries(FIELDS.map((f) => [f, shown(f, p[f])])));

const showProject = (p: ProjectAlerts) =>
  `Alerts of project ${p.project} (${INHERIT}: the global policy's value applies):\n` +
  table(
    ["FIELD", "OVERRIDE", "EFFECTIVE"],
    FIELDS.map((f) => [
      f,
      p.overrides[f] === null ? INHERIT : shown(f, p.overrides[f]),
      shown(f, p.effective[f]),
    ]),
  );

/**
 * A commander parser that also takes `inherit`, kept as the word (commander turns a parser's
 * `null` into ""); the action sends it as null.
 */
const orInherit = <T>(parse: (value: string) => T) => (value: string): T | typeof INHERIT =>
  value === INHERIT ? INHERIT : parse(value);

function boolean(value: string): boolean {
  if (value === "true") return true;
  if (value === "false") return false;
  throw new InvalidArgumentError(`Not true, false or ${INHERIT}.`);
}

/** Each policy field's option, as commander names it. */
const FLAG_OF = {
  enabled: "enabled",
  targets: "targets",
  failure_threshold: "failureThreshold",
  success_threshold: "successThreshold",
  reminder_minutes: "reminderMinutes",
  notify_degraded: "notifyDegraded",
  notify_recovered: "notifyRecovered",
  location_quorum: "locationQuorum",
  escalation: "escalation",
  flap_changes: "flapChanges",
  flap_minutes: "flapMinutes",
} as const;

/** A quorum: a number of locations, or `majority`. */
function quorum(value: string): number | "majority" {
  if (value === "majority") return value;
  return integer(value);
}

/**
 * Escalation steps: `MINUTES=TARGET,TARGET` joined by `;` (`10=pager;30=cto,ops`), or `none` for
 * no steps. The service checks the bounds and the targets.
 */
function steps(value: string): Steps {
  if (value === "none") return [];
  return value.split(";").map((part) => {
    const [minutes, targets, ...rest] = part.split("=");
    if (targets === undefined || rest.length > 0) {
      throw new InvalidArgumentError(
        `"${part}" is not MINUTES=TARGET[,TARGET…] (steps joined by ";", or none).`,
      );
    }
    return { after_minutes: integer(minutes.trim()), targets: list(targets) };
  });
}

type SetOptions =
  & { project?: string }
  & { [K in (typeof FLAG_OF)[keyof typeof FLAG_OF]]?: unknown };

/** `alerts get|set`: the global alert policy, or a project's overrides of it. */
export function alertsCommand(context: () => CliContext): Command {
  const alerts = new Command("alerts")
    .description("Read and change the alert policy: global, or a project's overrides");

  alerts.command("get")
    .description("Show the global alert policy, or with --project that project's overrides")
    .option("--project <name>", "the project whose overrides and effective policy to show")
    .action(async (options: { project?: string }) => {
      const { client, out } = context();
      if (options.project !== undefined) {
        const result = await client().alerts.getProject({ project: options.project });
        out.result(() => showProject(result.data), result);
        return;
      }
      const result = await client().alerts.get();
      out.result(() => showPolicy(result.data), result);
    });

  alerts.command("set")
    .description(
      "Change the global alert policy, or with --project override it for one project " +
        `(${INHERIT} sends null: the project inherits the global value again)`,
    )
    .option("--project <name>", "override the policy for this project only")
    .option(
      "--enabled <true|false>",
      "notify at all; other fields never turn alerts on",
      orInherit(boolean),
    )
    .option("--targets <list>", "comma-separated target names, e.g. log,ops-hook", orInherit(list))
    .option(
      "--failure-threshold <n>",
      "failing runs in a row before a probe is down, 1 to 10",
      orInherit(integer),
    )
    .option(
      "--success-threshold <n>",
      "passing runs in a row before a down probe recovers, 1 to 10",
      orInherit(integer),
    )
    .option(
      "--reminder-minutes <n>",
      "minutes between reminders while down and unacknowledged: 0 (none) or 5 to 10080",
      orInherit(integer),
    )
    .option(
      "--notify-degraded <true|false>",
      "notify when a probe goes from up to degraded",
      orInherit(boolean),
    )
    .option(
      "--notify-recovered <true|false>",
      "notify when a probe leaves down",
      orInherit(boolean),
    )
    .option(
      "--location-quorum <n|majority>",
      "how many of a probe's locations must be down for it to be down: 1 to 16, or majority",
      orInherit(quorum),
    )
    .option(
      "--escalation <steps|none>",
      "who else is told while an incident stays open and unacknowledged: MINUTES=TARGETS steps " +
        'joined by ";" (10=pager;30=cto,ops-slack), at most 5, minutes increasing; none for no steps',
      orInherit(steps),
    )
    .option(
      "--flap-changes <n>",
      "state changes within --flap-minutes past which a probe is flapping (one probe.flapping, " +
        "then quiet until stable): 0 (off) or 2 to 100",
      orInherit(integer),
    )
    .option(
      "--flap-minutes <n>",
      "the window flap changes are counted in, and the quiet that ends flapping: 1 to 1440",
      orInherit(integer),
    )
    .addHelpText(
      "after",
      `
Each value may also be "${INHERIT}" with --project: the project follows the global policy for that
field again. Options not given stay as they are.`,
    )
    .action(async (options: SetOptions) => {
      const { client, out } = context();
      const given = Object.fromEntries(
        FIELDS.filter((f) => options[FLAG_OF[f]] !== undefined).map((f) => {
          const value = options[FLAG_OF[f]];
          return [f, value === INHERIT ? null : value];
        }),
      );
      if (options.project !== undefined) {
        const input = { project: options.project, ...given } as ProjectAlertsUpdateInput;
        const result = await client().alerts.updateProject(input);
        out.result(() => showProject(result.data), result);
        return;
      }
      const inherited = FIELDS.find((f) => given[f] === null);
      if (inherited) {
        throw new UsageError(
          `"${INHERIT}" is for a project's overrides (add --project <name>); ` +
            `the global policy has a value for every field (--${
              FLAG_OF[inherited].replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)
            })`,
          EXIT.usage,
        );
      }
      const result = await client().alerts.update(given as AlertPolicyUpdateInput);
      out.result(() => showPolicy(result.data), result);
    });

  return alerts;
}
