/**
 * Location tokens: what a remote location's runners present, in the same headers as
 * an API key (`X-Service-Api-Key` or `Authorization: Bearer`). Made and checked against their
 * SHA-256 digests in `server/domain/locations.ts`.
 *
 * @module
 */

/** Every location token starts so; a key that is an API key is never looked up as one. */
export const LOCATION_TOKEN_PREFIX = "plt_";
