// @ts-check
/**
 * The dashboard's places, in the URL's fragment (`#/projects/shop`), so one page at `/` serves
 * them all and the back button works.
 */
import { useEffect, useState } from "preact/hooks";

const part = encodeURIComponent;

export const href = {
  overview: () => "#/",
  newProject: () => "#/new-project",
  locations: () => "#/locations",
  /** @param {string} project */
  project: (project) => `#/projects/${part(project)}`,
  /** @param {string} project */
  newProbe: (project) => `#/projects/${part(project)}/new-probe`,
  /** @param {string} project @param {string} probeId */
  probe: (project, probeId) => `#/projects/${part(project)}/probes/${part(probeId)}`,
  /** @param {string} project @param {string} probeId */
  editProbe: (project, probeId) => `${href.probe(project, probeId)}/edit`,
  /** @param {string} [query] the filters, as `state=resolved&project=shop` */
  incidents: (query = "") => (query ? `#/incidents?${query}` : "#/incidents"),
  targets: () => "#/targets",
  alertPolicy: () => "#/alert-policy",
  settings: () => "#/settings",
  audit: () => "#/audit-log",
  keys: () => "#/api-keys",
  /** @param {string} project */
  projectAlerts: (project) => `${href.project(project)}/alerts`,
  /** @param {string} project */
  maintenance: (project) => `${href.project(project)}/maintenance`,
  /** @param {string} project */
  statusPage: (project) => `${href.project(project)}/status-page`,
  /** @param {string} project */
  badges: (project) => `${href.project(project)}/badges`,
  /** @param {string} project */
  newHeartbeat: (project) => `${href.project(project)}/new-heartbeat`,
  /** @param {string} project @param {string} name */
  heartbeat: (project, name) => `${href.project(project)}/heartbeats/${part(name)}`,
  /** @param {string} project @param {string} name */
  editHeartbeat: (project, name) => `${href.heartbeat(project, name)}/edit`,
};

/**
 * Pages of their own, named by one word of the fragment: `#/targets`.
 * @type {Record<string, "targets" | "alertPolicy" | "settings" | "audit" | "keys">}
 */
const TOP_PAGES = {
  targets: "targets",
  "alert-policy": "alertPolicy",
  settings: "settings",
  "audit-log": "audit",
  "api-keys": "keys",
};
/**
 * A project's settings pages: `#/projects/shop/maintenance`.
 * @type {Record<string, "projectAlerts" | "maintenance" | "statusPage" | "badges">}
 */
const PROJECT_PAGES = {
  alerts: "projectAlerts",
  maintenance: "maintenance",
  "status-page": "statusPage",
  badges: "badges",
};

/**
 * A place of the dashboard.
 * @typedef {{
 *     name: "overview" | "newProject" | "notFound" | "targets" | "alertPolicy" | "locations"
 *       | "settings" | "audit" | "keys",
 *   }
 *   | { name: "incidents", query: string }
 *   | {
 *     name: "project" | "newProbe" | "projectAlerts" | "maintenance" | "statusPage" | "badges"
 *       | "newHeartbeat",
 *     project: string,
 *   }
 *   | { name: "probe" | "editProbe", project: string, probeId: string }
 *   | { name: "heartbeat" | "editHeartbeat", project: string, heartbeat: string }} Route
 */

/**
 * The route a fragment names: `{ name, project?, probeId? }`; `notFound` for anything else.
 * @param {string} hash
 * @returns {Route}
 */
export function parseRoute(hash) {
  // A query (`#/incidents?state=resolved`) is the incidents page's filters; others have none.
  const mark = hash.indexOf("?");
  const query = mark < 0 ? "" : hash.slice(mark + 1);
  const place = mark < 0 ? hash : hash.slice(0, mark);
  let parts;
  try {
    parts = place.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    return { name: "notFound" };
  }
  const [first, project, third, probeId, fifth] = parts;
  if (parts.length === 0) return { name: "overview" };
  if (first === "new-project" && parts.length === 1) return { name: "newProject" };
  if (first === "locations" && parts.length === 1) return { name: "locations" };
  if (first === "incidents" && parts.length === 1) return { name: "incidents", query };
  if (parts.length === 1 && Object.hasOwn(TOP_PAGES, first)) return { name: TOP_PAGES[first] };
  if (first !== "projects" || !project) return { name: "notFound" };
  if (parts.length === 2) return { name: "project", project };
  if (third === "new-probe" && parts.length === 3) return { name: "newProbe", project };
  if (third === "new-heartbeat" && parts.length === 3) return { name: "newHeartbeat", project };
  if (third === "heartbeats" && probeId && parts.length === 4) {
    return { name: "heartbeat", project, heartbeat: probeId };
  }
  if (third === "heartbeats" && probeId && fifth === "edit" && parts.length === 5) {
    return { name: "editHeartbeat", project, heartbeat: probeId };
  }
  if (parts.length === 3 && Object.hasOwn(PROJECT_PAGES, third)) {
    return { name: PROJECT_PAGES[third], project };
  }
  if (third === "probes" && probeId && parts.length === 4) {
    return { name: "probe", project, probeId };
  }
  if (third === "probes" && probeId && fifth === "edit" && parts.length === 5) {
    return { name: "editProbe", project, probeId };
  }
  return { name: "notFound" };
}

/** The current route; re-renders on navigation. */
export function useRoute() {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    addEventListener("hashchange", changed);
    // Effects run after the page is painted: a navigation between the first render and now
    // fired its event before anyone listened (a link opened right after signing in stayed on
    // the overview).
    changed();
    return () => removeEventListener("hashchange", changed);
  }, []);
  return parseRoute(hash);
}

/** @param {string} to */
export function navigate(to) {
  location.hash = to;
}
