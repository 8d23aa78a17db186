import { Command } from "commander";
import type { CliContext } from "../context.ts";
import { record } from "../output.ts";

const SAYS = {
  write: "may read and change everything",
  read: "may only read (a key of SERVICE_API_KEYS_READONLY): every change answers 403",
} as const;

/** `whoami`: what the key in use may do, and which service it was asked of. */
export function whoamiCommand(context: () => CliContext): Command {
  return new Command("whoami")
    .description("Show the scope of the API key in use: write, or read only")
    .action(async () => {
      const { client, out, serviceUrl } = context();
      const result = await client().whoami.get();
      const { scope } = result.data;
      out.result(
        () => `${record({ scope, service: serviceUrl })}\n\nThis key ${SAYS[scope]}.`,
        result,
      );
    });
}
