/**
 * The operator's CLI over the typed client: `overview`, `projects`, `probes`, `results`,
 * `incidents`, `alerts`, `targets`, `maintenance`, `status-page`, `badges`, `locations`,
 * `heartbeats`, `settings`,
 * `import`,
 * `export`, `whoami` and `audit`.
 * Tables for people, `--json` for scripts; the exit status says what failed (see EXIT).
 */
import { createProbeClient, ProbeApiError, type ProbeClient } from "@probe/client";
import { DEFAULT_SERVICE_URL, noApiKeyMessage, operatorApiKey, serviceUrlOf } from "@probe/shared";
import { Command, CommanderError, Option } from "commander";
import { alertsCommand } from "./commands/alerts.ts";
import { badgesCommand } from "./commands/badges.ts";
import { exportCommand } from "./commands/export.ts";
import { heartbeatsCommand } from "./commands/heartbeats.ts";
import { importCommand } from "./commands/import.ts";
import { incidentsCommand } from "./commands/incidents.ts";
import { auditCommand } from "./commands/audit.ts";
import { keysCommand } from "./commands/keys.ts";
import { locationsCommand } from "./commands/locations.ts";
import { maintenanceCommand } from "./commands/maintenance.ts";
import { overviewCommand } from "./commands/overview.ts";
import { probesCommand } from "./commands/probes.ts";
import { projectsCommand } from "./commands/projects.ts";
import { resultsCommand } from "./commands/results.ts";
import { settingsCommand } from "./commands/settings.ts";
import { statusPageCommand } from "./commands/status_pages.ts";
import { targetsCommand } from "./commands/targets.ts";
import { whoamiCommand } from "./commands/whoami.ts";
import { type CliContext, UsageError } from "./context.ts";
import { EXIT, EXIT_HELP, exitCodeFor } from "./exit_codes.ts";
import { createOutput, type Output } from "./output.ts";

export interface CliIo {
  env: Record<string, string | undefined>;
  stdout(text: string): void;
  stderr(text: string): void;
  readTextFile(path: string): Promise<string>;
  /** Writes a file (`export --output`); Deno.writeTextFile when omitted. */
  writeTextFile?(path: string, text: string): Promise<void>;
  fetch?: typeof fetch;
}

interface GlobalOptions {
  url?: string;
  apiKey?: string;
  json?: boolean;
}

const ENV_HELP = `Environment:
  PROBE_SERVICE_URL  the service's root URL (default ${DEFAULT_SERVICE_URL})
  SERVICE_API_KEY    the API key (the first, if it lists several); without it and --api-key,
                     the key the service generated in DATA_DIR/api-key (DATA_DIR: ./data)`;

/**
 * The global options, also taken after the verb (`projects get shop --json`), where the verb has
 * no option of its own by that name: `probes update --url` and `targets create --url` are the
 * probe's and the target's URL, so there the service's `--url` goes before the resource. The
 * program's options are positional (recognised before the resource only) for that reason.
 */
const GLOBAL_FLAGS = [
  { flags: "--url <url>", key: "url" },
  { flags: "--api-key <key>", key: "apiKey" },
  { flags: "--json", key: "json" },
] as const;

/** Gives a verb the global options it has none of its own for; answers their keys. */
function addGlobalOptions(verb: Command): Set<keyof GlobalOptions> {
  const own = new Set(verb.options.map((o) => o.attributeName()));
  const added = new Set<keyof GlobalOptions>();
  for (const { flags, key } of GLOBAL_FLAGS) {
    if (own.has(key)) continue;
    verb.addOption(new Option(flags).hideHelp());
    added.add(key);
  }
  return added;
}

/** The key from the option, the environment, or the file the service writes on first start. */
async function resolveApiKey(options: GlobalOptions, io: CliIo): Promise<string | undefined> {
  return options.apiKey || await operatorApiKey(io.env, io.readTextFile);
}

function reportError(error: unknown, out: Output): void {
  if (error instanceof ProbeApiError) {
    if (out.json) {
      const { status, code, message, details } = error;
      out.error(JSON.stringify({ error: { status, code, message, details } }));
      return;
    }
    const where = error.status ? `, HTTP ${error.status}` : "";
    out.error(`error: ${error.message} (${error.code}${where})`);
    for (const d of error.details) out.error(`  ${d.path || "(body)"}: ${d.message}`);
    return;
  }
  if (error instanceof UsageError) {
    out.error(
      out.json ? JSON.stringify({ error: { message: error.message } }) : `error: ${error.message}`,
    );
    return;
  }
  const message = error instanceof Error ? error.stack ?? error.message : String(error);
  out.error(`error: unexpected failure: ${message}`);
}

/** Runs the CLI with the arguments given (without the program name); answers the exit status. */
export async function runCli(args: string[], io: CliIo): Promise<number> {
  let context: CliContext | undefined;
  const program = new Command("deno task cli")
    .description(
      "Manage the probe service: the overview, projects, probes, their results, incidents, " +
        "alerts, notification targets, maintenance windows, status pages, badges, locations, " +
        "heartbeats, " +
        "I'm alive " +
        "settings, imports and exports",
    )
    .option("--url <url>", "the service's root URL (env PROBE_SERVICE_URL)")
    .option("--api-key <key>", "the API key (env SERVICE_API_KEY)")
    .option("--json", "print results as JSON, for scripts")
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError("(add --help for usage)")
    .addHelpText("after", `\n${ENV_HELP}\n\n${EXIT_HELP}`);

  let apiKey: string | undefined;
  const globalsOf = new Map<Command, Set<keyof GlobalOptions>>();
  program.hook("preAction", async (_program, verb) => {
    const options = { ...program.opts<GlobalOptions>() };
    const given = verb.opts<GlobalOptions>();
    for (const key of globalsOf.get(verb) ?? []) {
      if (given[key] !== undefined) Object.assign(options, { [key]: given[key] });
    }
    apiKey = await resolveApiKey(options, io);
    const out = createOutput({ json: Boolean(options.json), stdout: io.stdout, stderr: io.stderr });
    const baseUrl = serviceUrlOf(options.url, io.env);
    let client: ProbeClient | undefined;
    context = {
      serviceUrl: baseUrl.replace(/\/+$/, ""),
      out,
      readTextFile: io.readTextFile,
      writeTextFile: io.writeTextFile ?? ((path, text) => Deno.writeTextFile(path, text)),
      stdout: io.stdout,
      env: io.env,
      client: () => {
        if (!/^https?:\/\//.test(baseUrl) || !URL.canParse(baseUrl)) {
          throw new UsageError(`Not an http(s) URL: ${baseUrl}`, EXIT.usage);
        }
        if (!apiKey) {
          throw new UsageError(noApiKeyMessage(io.env, "; see --help"), EXIT.unauthorized);
        }
        client ??= createProbeClient({ baseUrl, apiKey, fetch: io.fetch });
        return client;
      },
    };
  });
  const current = () => context!;
  for (
    const command of [
      overviewCommand,
      projectsCommand,
      probesCommand,
      resultsCommand,
      incidentsCommand,
      alertsCommand,
      targetsCommand,
      maintenanceCommand,
      statusPageCommand,
      badgesCommand,
      locationsCommand,
      heartbeatsCommand,
      settingsCommand,
      importCommand,
      exportCommand,
      whoamiCommand,
      auditCommand,
      keysCommand,
    ]
  ) {
    program.addCommand(
      command(current)
        .exitOverride()
        .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
        .showHelpAfterError("(add --help for usage)"),
    );
  }
  for (const command of program.commands) {
    if (command.commands.length === 0) globalsOf.set(command, addGlobalOptions(command));
    for (const sub of command.commands) {
      sub.exitOverride().configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
        .showHelpAfterError("(add --help for usage)");
      globalsOf.set(sub, addGlobalOptions(sub));
    }
  }

  try {
    await program.parseAsync(args, { from: "user" });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has printed the message (or the help) already.
      return error.code === "commander.helpDisplayed" || error.code === "commander.version"
        ? EXIT.ok
        : EXIT.usage;
    }
    reportError(
      error,
      context?.out ?? createOutput({ json: false, stdout: io.stdout, stderr: io.stderr }),
    );
    return error instanceof UsageError ? error.exitCode : exitCodeFor(error);
  }
}
