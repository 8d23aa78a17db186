import { z } from "zod";
import { LOG_LEVELS } from "./log.ts";

const optional = (schema: z.ZodType) =>
  z.preprocess((v) => (typeof v === "string" && v.trim() === "" ? undefined : v), schema);

const configSchema = z.object({
  PORT: optional(z.coerce.number().int().min(0).max(65535).default(8000)),
  HOST: optional(z.string().default("127.0.0.1")),
  SERVICE_API_KEY: optional(
    z.string()
      .transform((v) => v.split(",").map((k) => k.trim()).filter((k) => k.length > 0))
      .refine((keys) => keys.length > 0, "must hold at least one key")
      .refine((keys) => keys.every((k) => k.length >= 8), "every key must be at least 8 characters")
      .optional(),
  ),
  DATABASE_URL: optional(
    z.string()
      .refine((v) => /^postgres(ql)?:\/\//.test(v) && URL.canParse(v), "must be a postgres:// URL")
      .optional(),
  ),
  DATA_DIR: optional(z.string().default("./data")),
  LOG_LEVEL: optional(z.enum(LOG_LEVELS).default("info")),
});

export interface Config {
  port: number;
  host: string;
  apiKeys?: string[];
  databaseUrl?: string;
  dataDir: string;
  logLevel: (typeof LOG_LEVELS)[number];
}

/** A configuration value that is not usable; the message names the variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Reads the configuration once, from the environment given; throws ConfigError on a bad value. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration: ${problems.join("; ")}`);
  }
  const c = parsed.data as {
    PORT: number;
    HOST: string;
    SERVICE_API_KEY?: string[];
    DATABASE_URL?: string;
    DATA_DIR: string;
    LOG_LEVEL: Config["logLevel"];
  };
  return {
    port: c.PORT,
    host: c.HOST,
    apiKeys: c.SERVICE_API_KEY,
    databaseUrl: c.DATABASE_URL,
    dataDir: c.DATA_DIR,
    logLevel: c.LOG_LEVEL,
  };
}
