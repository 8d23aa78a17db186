/**
 * A heartbeat is stored as a probe whose URL has a scheme of its own; the probes API never makes
 * nor shows such a probe, and alerting tells a heartbeat's alerts by it.
 *
 * @module
 */

/** The URL scheme of heartbeats' probes. */
export const HEARTBEAT_SCHEME = "heartbeat://";

/** Whether a probe URL is a heartbeat's. */
export const isHeartbeatUrl = (url: string) => url.startsWith(HEARTBEAT_SCHEME);
