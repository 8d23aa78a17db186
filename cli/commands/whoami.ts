import { Command } from "commander";
import type { CliContext } from "../context.ts";
import { record } from "../output.ts";

const SAYS = {
  write: "may read and change everything",
  read: "may only read (a key of SERVICE_API_KEYS_READONLY): every change answers 403",
} as const;

/**
 * `whoami`: who the key in use is (name, role, projects), what it may do, and which service
 * (its version and database) said so.
 */
export function whoamiCommand(context: () => CliContext): Command {
  return new Command("whoami")
    .description(
      "Show who the API key in use is (name, role, projects), its scope (write, or read " +
        "only), and the service's version and database",
    )
    .action(async () => {
      const { client, out, serviceUrl } = context();
      const result = await client().whoami.get();
      const { name, role, projects, scope, version, database } = result.data;
      const limitedTo = projects === null ? "every project" : projects.join(", ") || "none";
      out.result(
        () =>
          `${
            record({
              name,
              role,
              projects: limitedTo,
              scope,
              service: serviceUrl,
              version,
              database,
            })
          }\n\nThis key ${SAYS[scope]}.`,
        result,
      );
    });
}
