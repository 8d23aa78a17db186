import meta from "../deno.json" with { type: "json" };

/** The service's version, as its package declares it. */
export const SERVICE_VERSION: string = meta.version;
