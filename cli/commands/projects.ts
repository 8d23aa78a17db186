import { Command, Option } from "commander";
import type { Project } from "@probe/client";
import type { CliContext } from "../context.ts";
import { list } from "../options.ts";
import { record, table } from "../output.ts";
import { statusRows } from "./results.ts";

const DEFAULT_LOCATIONS_HELP = "where its probes without their own locations run: location " +
  "names, comma-separated (default: the built-in location)";

const projectRows = (projects: Project[]) =>
  table(
    ["PROJECT", "STATUS", "LABEL", "DESCRIPTION"],
    projects.map((p) => [p.project, p.status, p.label, p.description]),
  );

/** `projects list|get|status|create|update|delete`. */
export function projectsCommand(context: () => CliContext): Command {
  const projects = new Command("projects")
    .description("Create, read, change and delete projects; show their status boards");

  projects.command("list")
    .description("List projects")
    .option("--project <name>", "only the project with this exact name")
    .action(async (options: { project?: string }) => {
      const { client, out } = context();
      const result = await client().projects.list({ project: options.project });
      out.result(
        () => result.data.length ? projectRows(result.data) : "No projects.",
        result,
      );
    });

  projects.command("get")
    .description("Show one project")
    .argument("<project>", "project name")
    .action(async (project: string) => {
      const { client, out } = context();
      const result = await client().projects.get({ project });
      out.result(() => record(result.data), result);
    });

  projects.command("status")
    .description("Show each probe's last outcome and 24-hour uptime")
    .argument("<project>", "project name")
    .action(async (project: string) => {
      const { client, out } = context();
      const result = await client().results.status({ project });
      out.result(() => {
        const probes = result.meta.count === 1 ? "1 probe" : `${result.meta.count} probes`;
        const head = `Project ${project} is ${result.meta.status}, ${probes}.`;
        return result.data.length ? `${head}\n${statusRows(result.data)}` : head;
      }, result);
    });

  projects.command("create")
    .description("Create a project")
    .argument("<project>", "project name: letters, digits, '.', '_', '-'")
    .option("--label <text>", "human-readable label")
    .option("--description <text>", "description")
    .option("--default-locations <names>", DEFAULT_LOCATIONS_HELP, list)
    .action(async (
      project: string,
      options: { label?: string; description?: string; defaultLocations?: string[] },
    ) => {
      const { client, out } = context();
      const { defaultLocations, ...rest } = options;
      const result = await client().projects.create({
        project,
        ...rest,
        default_locations: defaultLocations,
      });
      out.result(() => `Created project ${result.data.project}.`, result);
    });

  projects.command("update")
    .description("Change a project's label, description or status")
    .argument("<project>", "project name")
    .option("--label <text>", "new label")
    .option("--no-label", "clear the label")
    .option("--description <text>", "new description")
    .option("--no-description", "clear the description")
    .addOption(
      new Option("--status <status>", "enable or disable the project")
        .choices(["enabled", "disabled"]),
    )
    .option("--default-locations <names>", DEFAULT_LOCATIONS_HELP, list)
    .option("--no-default-locations", "its probes run from the built-in location by default")
    .action(async (
      project: string,
      options: {
        label?: string | false;
        description?: string | false;
        status?: Project["status"];
        defaultLocations?: string[] | false;
      },
    ) => {
      const { client, out } = context();
      const result = await client().projects.update({
        project,
        label: options.label === false ? null : options.label,
        description: options.description === false ? null : options.description,
        status: options.status,
        default_locations: options.defaultLocations === false ? null : options.defaultLocations,
      });
      out.result(() => `Updated project ${result.data.project}.`, result);
    });

  projects.command("delete")
    .description("Archive a project with its probes, then delete them")
    .argument("<project>", "project name")
    .action(async (project: string) => {
      const { client, out } = context();
      const result = await client().projects.delete({ project });
      out.result(() => result.meta.message, result);
    });

  return projects;
}
