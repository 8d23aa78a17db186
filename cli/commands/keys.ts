import { Command, InvalidArgumentError } from "commander";
import type { ApiKey, ApiKeyWithKey } from "@probe/client";
import type { CliContext } from "../context.ts";
import { record, table } from "../output.ts";
import { ago } from "./locations.ts";

const ROLES = ["viewer", "editor", "admin"] as const;
type Role = typeof ROLES[number];

const keyRows = (keys: ApiKey[]) =>
  table(
    ["NAME", "ROLE", "PROJECTS", "CREATED_BY", "EXPIRES_AT", "LAST_USED"],
    keys.map((k) => [
      k.configured ? `${k.name} (configured)` : k.name,
      k.role,
      k.projects?.join(",") ?? "all",
      k.created_by,
      k.expires_at,
      k.configured ? "-" : ago(k.last_used_at),
    ]),
  );

/** A new key, with what to do with it: it is not shown again. */
const showKey = (verb: string, k: ApiKeyWithKey) =>
  [
    `${verb} API key ${k.name} (${k.role}${k.projects ? ` of ${k.projects.join(", ")}` : ""}).`,
    `The key, shown this once (keys rotate ${k.name} makes a new one):`,
    "",
    `  ${k.key}`,
    "",
    "Use it as the X-Service-Api-Key header, or as SERVICE_API_KEY for this CLI.",
  ].join("\n");

function role(value: string): Role {
  if (!(ROLES as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`Not one of ${ROLES.join(", ")}.`);
  }
  return value as Role;
}

/**
 * `--projects a,b`: the list; `--projects all`: every project (kept as `all` here: commander
 * takes a parser's null for no value).
 */
function projects(value: string): string[] | "all" {
  return value === "all" ? "all" : value.split(",").map((p) => p.trim()).filter(Boolean);
}

const projectsOf = (value: string[] | "all" | undefined) => value === "all" ? null : value;

/**
 * `keys list|show|create|update|rotate|delete`: API keys made through the API (admin keys only).
 * The key is printed when it is made or rotated, never again.
 */
export function keysCommand(context: () => CliContext): Command {
  const keys = new Command("keys")
    .description(
      "List, create, change, rotate and delete API keys (roles viewer, editor, admin; optionally " +
        "limited to projects). Admin keys only; a key is printed once, when made or rotated",
    );

  keys.command("list")
    .description("List keys: the configured ones first, then the others by name")
    .action(async () => {
      const { client, out } = context();
      const result = await client().apiKeys.list();
      out.result(() => keyRows(result.data), result);
    });

  keys.command("show")
    .description("Show one key's record (never the key)")
    .argument("<name>", "key name")
    .action(async (name: string) => {
      const { client, out } = context();
      const result = await client().apiKeys.get({ name });
      out.result(() => record(result.data), result);
    });

  keys.command("create")
    .description("Create a key and print it (shown this once)")
    .argument("<name>", "its name (the rules of a project name)")
    .requiredOption("--role <role>", "viewer, editor or admin", role)
    .option("--projects <names>", "the projects it sees, comma-separated (default: all)", projects)
    .option("--expires-at <time>", "when it stops working (ISO 8601 with an offset)")
    .action(
      async (
        name: string,
        options: { role: Role; projects?: string[] | "all"; expiresAt?: string },
      ) => {
        const { client, out } = context();
        const result = await client().apiKeys.create({
          name,
          role: options.role,
          projects: projectsOf(options.projects),
          expires_at: options.expiresAt,
        });
        out.result(() => showKey("Created", result.data), result);
      },
    );

  keys.command("update")
    .description("Change a key's role, projects or expiry (the key stays the same)")
    .argument("<name>", "key name")
    .option("--role <role>", "viewer, editor or admin", role)
    .option("--projects <names>", "the projects it sees, comma-separated; all: every one", projects)
    .option("--expires-at <time>", "when it stops working (ISO 8601 with an offset)")
    .option("--no-expires-at", "never expires")
    .action(
      async (
        name: string,
        options: { role?: Role; projects?: string[] | "all"; expiresAt?: string | false },
      ) => {
        const { client, out } = context();
        const result = await client().apiKeys.update({
          name,
          role: options.role,
          projects: projectsOf(options.projects),
          expires_at: options.expiresAt === false ? null : options.expiresAt,
        });
        out.result(() => `Updated API key ${name}.`, result);
      },
    );

  keys.command("rotate")
    .description("Give a key a new value and print it; the old one stops within a second")
    .argument("<name>", "key name")
    .action(async (name: string) => {
      const { client, out } = context();
      const result = await client().apiKeys.rotate({ name });
      out.result(() => showKey("Rotated", result.data), result);
    });

  keys.command("delete")
    .description("Delete a key: it stops working within a second on every instance")
    .argument("<name>", "key name")
    .action(async (name: string) => {
      const { client, out } = context();
      await client().apiKeys.delete({ name });
      out.result(
        () => `Deleted API key ${name}: it no longer works.`,
        { data: { name, deleted: true } },
      );
    });

  return keys;
}
