import { Command } from "commander";
import type { AuditEntry } from "@probe/client";
import type { CliContext } from "../context.ts";
import { integer } from "../options.ts";
import { table } from "../output.ts";

/** The fields a change touched: those of its `after`, or of its `before` for a delete. */
const fieldsOf = (entry: AuditEntry) =>
  Object.keys(entry.after ?? entry.before ?? {}).join(",") || "-";

const entryRows = (entries: AuditEntry[]) =>
  table(
    ["ID", "AT", "ACTOR", "OPERATION", "RESOURCE", "FIELDS", "ADDRESS"],
    entries.map((e) => [
      e.id,
      e.at,
      e.actor,
      e.operation,
      e.resource.id === "" ? e.resource.type : `${e.resource.type}:${e.resource.id}`,
      fieldsOf(e),
      e.address,
    ]),
  );

/** `audit list`: who changed what, when and from where (admin keys only). */
export function auditCommand(context: () => CliContext): Command {
  const audit = new Command("audit")
    .description("Read the audit log: every change through the API, newest first (admin only)");

  audit.command("list")
    .description(
      "List entries, newest first; --json shows each change's fields before and after",
    )
    .option("--actor <name>", "only this key's or user's changes")
    .option(
      "--resource <type[:id]>",
      "only this type of resource (probe), or one resource (probe:web/api-1a2b3c)",
    )
    .option("--since <time>", "only changes at or after this time (ISO 8601 with an offset)")
    .option("--before <time>", "only changes before this time (ISO 8601 with an offset)")
    .option("--limit <n>", "how many, 1 to 1000 (default 50)", integer, 50)
    .option("--after <cursor>", "the next page's cursor, as the last page printed it")
    .action(async (options: {
      actor?: string;
      resource?: string;
      since?: string;
      before?: string;
      limit: number;
      after?: string;
    }) => {
      const { client, out } = context();
      const result = await client().auditLog.list(options);
      out.result(() => {
        if (result.data.length === 0) return "No entries.";
        const rows = entryRows(result.data);
        const next = result.meta.next_after;
        return next ? `${rows}\nNext page: --after ${next}` : rows;
      }, result);
    });

  return audit;
}
