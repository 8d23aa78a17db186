/**
 * The dashboard's places, in the URL's fragment (`#/projects/shop`), so one page at `/` serves
 * them all and the back button works.
 */
import { useEffect, useState } from "preact/hooks";

const part = encodeURIComponent;

export const href = {
  overview: () => "#/",
  locations: () => "#/locations",
  newProject: () => "#/new-project",
  project: (project) => `#/projects/${part(project)}`,
  newProbe: (project) => `#/projects/${part(project)}/new-probe`,
  probe: (project, probeId) => `#/projects/${part(project)}/probes/${part(probeId)}`,
  editProbe: (project, probeId) => `${href.probe(project, probeId)}/edit`,
};

/** The route a fragment names: `{ name, project?, probeId? }`; `notFound` for anything else. */
export function parseRoute(hash) {
  let parts;
  try {
    parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    return { name: "notFound" };
  }
  const [first, project, third, probeId, fifth] = parts;
  if (parts.length === 0) return { name: "overview" };
  if (first === "new-project" && parts.length === 1) return { name: "newProject" };
  if (first === "locations" && parts.length === 1) return { name: "locations" };
  if (first !== "projects" || !project) return { name: "notFound" };
  if (parts.length === 2) return { name: "project", project };
  if (third === "new-probe" && parts.length === 3) return { name: "newProbe", project };
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
    return () => removeEventListener("hashchange", changed);
  }, []);
  return parseRoute(hash);
}

export function navigate(to) {
  location.hash = to;
}
