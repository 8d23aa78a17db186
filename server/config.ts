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
  DATABASE_POOL_SIZE: optional(z.coerce.number().int().min(1).max(1000).default(10)),
  DATABASE_CONNECT_TIMEOUT_MS: optional(z.coerce.number().int().min(100).max(60_000).default(1500)),
  DATABASE_STATEMENT_TIMEOUT_MS: optional(z.coerce.number().int().min(0).default(1500)),
  DATA_DIR: optional(z.string().default("./data")),
  LOG_LEVEL: optional(z.enum(LOG_LEVELS).default("info")),
  RATE_LIMIT_PER_SECOND: optional(z.coerce.number().min(0).default(1000)),
  CORS_ORIGINS: optional(
    z.string()
      .transform((v) => v.split(",").map((o) => o.trim()).filter((o) => o.length > 0))
      .refine(
        (origins) => origins.every((o) => URL.canParse(o) && new URL(o).origin === o),
        "must be a comma-separated list of origins such as https://app.example.com",
      )
      .default([]),
  ),
});

export interface Config {
  port: number;
  host: string;
  apiKeys?: string[];
  databaseUrl?: string;
  /** Connections postgres.js may open. */
  databasePoolSize: number;
  /** How long opening a database connection may take before the request answers 503. */
  databaseConnectTimeoutMs: number;
  /** How long one SQL statement may run before it is cancelled (503); 0 for no limit. */
  databaseStatementTimeoutMs: number;
  dataDir: string;
  logLevel: (typeof LOG_LEVELS)[number];
  /** Requests per second per API key (a token bucket holding twice that); 0 for no limit. */
  rateLimitPerSecond: number;
  /** Origins that may call from a browser; none gets CORS headers when empty. */
  corsOrigins: string[];
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
    DATABASE_POOL_SIZE: number;
    DATABASE_CONNECT_TIMEOUT_MS: number;
    DATABASE_STATEMENT_TIMEOUT_MS: number;
    DATA_DIR: string;
    LOG_LEVEL: Config["logLevel"];
    RATE_LIMIT_PER_SECOND: number;
    CORS_ORIGINS: string[];
  };
  return {
    port: c.PORT,
    host: c.HOST,
    apiKeys: c.SERVICE_API_KEY,
    databaseUrl: c.DATABASE_URL,
    databasePoolSize: c.DATABASE_POOL_SIZE,
    databaseConnectTimeoutMs: c.DATABASE_CONNECT_TIMEOUT_MS,
    databaseStatementTimeoutMs: c.DATABASE_STATEMENT_TIMEOUT_MS,
    dataDir: c.DATA_DIR,
    logLevel: c.LOG_LEVEL,
    rateLimitPerSecond: c.RATE_LIMIT_PER_SECOND,
    corsOrigins: c.CORS_ORIGINS,
  };
}
