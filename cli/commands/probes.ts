import { Command, InvalidArgumentError, Option } from "commander";
import type { Probe, ProbeExpect, ProbeResult } from "@probe/client";
import { kindOf } from "@probe/shared";
import { parse as parseYaml } from "yaml";
import { type CliContext, UsageError } from "../context.ts";
import { EXIT } from "../exit_codes.ts";
import { header, integer, jsonValue, list } from "../options.ts";
import { record, table } from "../output.ts";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

const probeRows = (probes: Probe[]) =>
  table(
    ["PROJECT", "PROBE_ID", "METHOD", "URL", "LATENCY_MS", "INTERVAL_S", "TIMEOUT_MS"],
    // A probe without its own interval or timeout runs at the service-wide setting: "default".
    // A kind without a method (tcp://, tls://, dns://) shows "-" there.
    probes.map((p) => [
      p.project,
      p.probe_id,
      kindOf(p.url)?.uses.method === false ? "-" : p.method,
      p.url,
      p.latency,
      p.interval_seconds ?? "default",
      p.timeout_ms ?? "default",
    ]),
  );

const methodOption = () =>
  new Option("--method <method>", `HTTP method: ${METHODS.join(", ")} (default GET)`)
    .argParser((value) => {
      const method = value.toUpperCase();
      if (!METHODS.includes(method)) {
        throw new InvalidArgumentError(`Not one of ${METHODS.join(", ")}.`);
      }
      return method;
    });

interface DefinitionOptions {
  method?: string;
  header?: Record<string, string>;
  body?: unknown;
  send?: string;
  latency?: number | false;
  label?: string | false;
  interval?: number | false;
  timeout?: number | false;
  expect?: unknown;
  expectFile?: string;
  locations?: string[] | false;
  dependsOn?: string[] | false;
}

const LOCATIONS_HELP = "where it runs: location names, comma-separated (locations list; " +
  "default: the project's default_locations)";

const DEPENDS_ON_HELP = "probe ids of this project it depends on, comma-separated: while one " +
  "is down, its alerts wait for it";

/** `--depends-on a,b` as given, `[]` for `--no-depends-on`, undefined when absent. */
const dependsOnOf = (options: DefinitionOptions) =>
  options.dependsOn === false ? [] : options.dependsOn;

/** `--locations a,b` as given, `null` for `--no-locations`, undefined when absent. */
const locationsOf = (options: DefinitionOptions) =>
  options.locations === false ? null : options.locations;

/** `--send`: a tcp:// or tls:// probe's body, text as typed (`--body` takes JSON). */
const sendOption = () =>
  new Option(
    "--send <text>",
    "tcp:// and tls:// only: text sent once connected (\\r and \\n as typed escapes), whose answer " +
      "expect.body reads",
  ).conflicts("body");

/** `--send`'s text with `\r`, `\n` and `\t` typed as escapes made the characters. */
const sendText = (text: string) =>
  text.replace(
    /\\([rnt\\])/g,
    (_m, c: string) => c === "r" ? "\r" : c === "n" ? "\n" : c === "t" ? "\t" : "\\",
  );

/** The body the options give: `--send`'s text, else `--body`'s JSON. */
const bodyOf = (options: DefinitionOptions) =>
  options.send !== undefined ? sendText(options.send) : options.body;

const expectOption = () =>
  new Option(
    "--expect <json>",
    'what a run must show to pass, as JSON: {"status":["2xx"],"json":[…],…} (docs/assertions.md)',
  ).argParser(jsonValue).conflicts("expectFile");

const expectFileOption = () =>
  new Option("--expect-file <path>", "the same from a JSON or YAML file (- for stdin)");

/**
 * The `expect` the options give: `--expect` as parsed, `--expect-file`'s content (YAML, which
 * JSON is a subset of), `null` for `--no-expect`, undefined when none is given. The service
 * checks it (a 422 names the field at fault).
 */
async function expectOf(
  { readTextFile }: CliContext,
  options: DefinitionOptions,
): Promise<ProbeExpect | null | undefined> {
  if (options.expect === false) return null;
  if (options.expectFile === undefined) return options.expect as ProbeExpect | undefined;
  const where = options.expectFile === "-" ? "stdin" : options.expectFile;
  let text: string;
  try {
    text = await readTextFile(options.expectFile);
  } catch (error) {
    throw new UsageError(`Cannot read ${where}: ${(error as Error).message}`, EXIT.usage);
  }
  try {
    return parseYaml(text) as ProbeExpect;
  } catch (error) {
    throw new UsageError(`${where} cannot be parsed: ${(error as Error).message}`, EXIT.usage);
  }
}

/** One run as the service recorded it, and the assertions it failed. */
export function showRun(run: ProbeResult): string {
  const { failed_checks: failed, ...fields } = run;
  const lines = [record(fields)];
  if (failed?.length) {
    lines.push(
      "",
      table(
        ["FAILED_CHECK", "EXPECTED", "SEEN"],
        failed.map((c) => [c.check, c.expected, c.seen]),
      ),
    );
  }
  return lines.join("\n");
}

/** `probes list|get|create|update|delete|run`. */
export function probesCommand(context: () => CliContext): Command {
  const probes = new Command("probes").description("Create, read, change and delete probes");

  probes.command("list")
    .description("List probes, of all projects or of one")
    .option("--project <name>", "only the probes of this project")
    .action(async (options: { project?: string }) => {
      const { client, out } = context();
      const result = await client().probes.list({ project: options.project });
      out.result(() => result.data.length ? probeRows(result.data) : "No probes.", result);
    });

  probes.command("get")
    .description("Show one probe")
    .argument("<project>", "project name")
    .argument("<probeId>", "probe id")
    .action(async (project: string, probeId: string) => {
      const { client, out } = context();
      const result = await client().probes.get({ project, probeId });
      out.result(() => record(result.data), result);
    });

  probes.command("create")
    .description("Create a probe, or rewrite the project's probe for the same URL")
    .argument("<project>", "project name")
    .argument(
      "<url>",
      "what it watches: http(s)://…, tcp://host:port, tls://host:port or " +
        "dns://resolver[:port]/name?type=A (docs/kinds.md)",
    )
    .addOption(methodOption())
    .option("--header <name:value>", "request header, repeatable", header)
    .option("--body <json>", "request body, as JSON", jsonValue)
    .addOption(sendOption())
    .option("--latency <ms>", "maximum expected latency in milliseconds", integer)
    .option("--label <text>", "a name for the probe in lists and alerts")
    .option("--interval <seconds>", "how often it runs, 10-86400 (default: the service's)", integer)
    .option(
      "--timeout <ms>",
      "how long a run may take, 100-120000 (default: the service's)",
      integer,
    )
    .addOption(expectOption())
    .addOption(expectFileOption())
    .option("--locations <names>", LOCATIONS_HELP, list)
    .option("--depends-on <ids>", DEPENDS_ON_HELP, list)
    .action(async (project: string, url: string, options: DefinitionOptions) => {
      const ctx = context();
      const { client, out } = ctx;
      const result = await client().probes.create({
        project,
        url,
        method: options.method,
        headers: options.header,
        body: bodyOf(options),
        latency: options.latency === false ? null : options.latency,
        label: options.label === false ? null : options.label,
        interval_seconds: options.interval === false ? null : options.interval,
        timeout_ms: options.timeout === false ? null : options.timeout,
        expect: await expectOf(ctx, options),
        locations: locationsOf(options),
        depends_on: dependsOnOf(options),
      });
      out.result(
        () =>
          `${result.meta.created ? "Created" : "Rewrote"} probe ${result.data.probe_id} ` +
          `(${result.data.url}) in ${result.data.project}.`,
        result,
      );
    });

  probes.command("update")
    .description("Rewrite a probe; a new URL or method gives it a new id")
    .argument("<project>", "project name")
    .argument("<probeId>", "probe id")
    .option("--url <url>", "new target URL")
    .addOption(methodOption())
    .option("--header <name:value>", "request header, repeatable; replaces all headers", header)
    .option("--body <json>", "new request body, as JSON", jsonValue)
    .addOption(sendOption())
    .option("--no-body", "send no body")
    .option("--latency <ms>", "maximum expected latency in milliseconds", integer)
    .option("--no-latency", "no latency limit")
    .option("--label <text>", "a name for the probe in lists and alerts")
    .option("--no-label", "clear the label")
    .option("--interval <seconds>", "how often it runs, 10-86400", integer)
    .option("--no-interval", "run at the service-wide interval (PROBE_INTERVAL_SECONDS)")
    .option("--timeout <ms>", "how long a run may take, 100-120000", integer)
    .option("--no-timeout", "use the service-wide timeout (PROBE_TIMEOUT_MS)")
    .addOption(expectOption())
    .addOption(expectFileOption())
    .option("--no-expect", "clear the assertions: a status below 400 passes")
    .option("--locations <names>", LOCATIONS_HELP, list)
    .option("--no-locations", "run where the project's default_locations say")
    .option("--depends-on <ids>", DEPENDS_ON_HELP, list)
    .option("--no-depends-on", "depend on no probe")
    .action(async (
      project: string,
      probeId: string,
      options: DefinitionOptions & { url?: string },
    ) => {
      const ctx = context();
      const { client, out } = ctx;
      const result = await client().probes.update({
        project,
        probeId,
        url: options.url,
        method: options.method,
        headers: options.header,
        body: options.body === false ? null : bodyOf(options),
        latency: options.latency === false ? null : options.latency,
        label: options.label === false ? null : options.label,
        interval_seconds: options.interval === false ? null : options.interval,
        timeout_ms: options.timeout === false ? null : options.timeout,
        expect: await expectOf(ctx, options),
        locations: locationsOf(options),
        depends_on: dependsOnOf(options),
      });
      out.result(() => {
        const renamed = result.data.probe_id === probeId ? "" : `, now ${result.data.probe_id}`;
        return `Updated probe ${probeId}${renamed}.`;
      }, result);
    });

  probes.command("delete")
    .description("Delete a probe")
    .argument("<project>", "project name")
    .argument("<probeId>", "probe id")
    .action(async (project: string, probeId: string) => {
      const { client, out } = context();
      await client().probes.delete({ project, probeId });
      out.result(
        () => `Deleted probe ${probeId}.`,
        { data: { project, probe_id: probeId, deleted: true } },
      );
    });

  probes.command("run")
    .description(
      "Run a probe once, now, and show the result (recorded like any run: it counts toward " +
        "the probe's state and uptime)",
    )
    .argument("<project>", "project name")
    .argument("<probeId>", "probe id")
    .action(async (project: string, probeId: string) => {
      const { client, out } = context();
      const result = await client().probes.run({ project, probeId });
      out.result(() => showRun(result.data), result);
    });

  return probes;
}
