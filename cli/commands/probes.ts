import { Command, InvalidArgumentError, Option } from "commander";
import type { Probe } from "@probe/client";
import type { CliContext } from "../context.ts";
import { header, integer, jsonValue } from "../options.ts";
import { record, table } from "../output.ts";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

const probeRows = (probes: Probe[]) =>
  table(
    ["PROJECT", "PROBE_ID", "METHOD", "URL", "LATENCY_MS"],
    probes.map((p) => [p.project, p.probe_id, p.method, p.url, p.latency]),
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
  latency?: number | false;
}

/** `probes list|get|create|update|delete`. */
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
    .argument("<url>", "target URL (http or https)")
    .addOption(methodOption())
    .option("--header <name:value>", "request header, repeatable", header)
    .option("--body <json>", "request body, as JSON", jsonValue)
    .option("--latency <ms>", "maximum expected latency in milliseconds", integer)
    .action(async (project: string, url: string, options: DefinitionOptions) => {
      const { client, out } = context();
      const result = await client().probes.create({
        project,
        url,
        method: options.method,
        headers: options.header,
        body: options.body,
        latency: options.latency === false ? null : options.latency,
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
    .option("--no-body", "send no body")
    .option("--latency <ms>", "maximum expected latency in milliseconds", integer)
    .option("--no-latency", "no latency limit")
    .action(async (
      project: string,
      probeId: string,
      options: DefinitionOptions & { url?: string },
    ) => {
      const { client, out } = context();
      const result = await client().probes.update({
        project,
        probeId,
        url: options.url,
        method: options.method,
        headers: options.header,
        body: options.body === false ? null : options.body,
        latency: options.latency === false ? null : options.latency,
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

  return probes;
}
