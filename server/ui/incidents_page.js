// @ts-check
/**
 * Incidents across projects (`GET /incidents`): open, resolved or both, of every project, one
 * project or one probe, newest first, 25 to a page (10 on a narrow screen), each open one with
 * Acknowledge (for a key that may write). Both (the page's first view) lists the open ones
 * first, then the resolved ones a page at a time, so that the page says what just happened even
 * when nothing is open any more.
 */
import { useEffect, useState } from "preact/hooks";
import { view } from "./view.js";
import { get, seg } from "./api.js";
import { useEvery, useLoad, useTitle } from "./load.js";
import { href } from "./routes.js";
import { At, ErrorNote, Loading } from "./parts.js";
import { AcknowledgeButton } from "./incidents.js";
import { duration } from "./format.js";

/** @import { Incident } from "./api_types.d.ts" */
/**
 * @typedef {{ state: string, project: string, probe: string }} Filters
 */

/** How often the first page is asked again. */
const REFRESH_MS = 30_000;
/** Incidents per page. */
export const INCIDENTS_PAGE = 25;
/** Incidents per page on a narrow screen, where each is a card of seven lines. */
export const INCIDENTS_PAGE_NARROW = 10;
/** The width below which tables become cards (dashboard.css). */
const NARROW = "(max-width: 45rem)";

/** Incidents per page at the screen's width now; follows a change of width. */
function usePageSize() {
  const [narrow, setNarrow] = useState(() => matchMedia(NARROW).matches);
  useEffect(() => {
    const query = matchMedia(NARROW);
    const changed = () => setNarrow(query.matches);
    query.addEventListener("change", changed);
    return () => query.removeEventListener("change", changed);
  }, []);
  return narrow ? INCIDENTS_PAGE_NARROW : INCIDENTS_PAGE;
}
const STATES = [["all", "Both (open first)"], ["open", "Open"], ["resolved", "Resolved"]];
/** Open incidents listed above the resolved ones: as many as the API lists at once. */
const OPEN_FIRST = 100;

/** @param {Incident} incident */
const openFor = (incident) =>
  Math.max(0, Math.round((Date.now() - Date.parse(incident.started_at)) / 1000));

/**
 * The filters a fragment's query names (`state=resolved&project=shop&probe=…`): open, then
 * resolved incidents of every project when it names none.
 * @param {string} text
 * @returns {Filters}
 */
export function filtersOf(text) {
  const params = new URLSearchParams(text);
  const state = params.get("state") ?? "";
  const project = params.get("project") ?? "";
  return {
    state: STATES.some(([value]) => value === state) ? state : "all",
    project,
    probe: project ? params.get("probe") ?? "" : "",
  };
}

/**
 * The fragment's query for some filters: the default ones left out.
 * @param {Filters} filters
 */
export function queryOf(filters) {
  const params = new URLSearchParams();
  if (filters.state !== "all") params.set("state", filters.state);
  if (filters.project) params.set("project", filters.project);
  if (filters.project && filters.probe) params.set("probe", filters.probe);
  return params.toString();
}

/**
 * The query of one page: of resolved incidents when the open ones are listed apart (`all`).
 * @param {Filters} filters
 * @param {string | null} before
 * @param {number} size
 */
function query(filters, before, size) {
  const params = new URLSearchParams({ limit: String(size) });
  params.set("state", filters.state === "all" ? "resolved" : filters.state);
  if (filters.project) params.set("project", filters.project);
  if (filters.project && filters.probe) params.set("probe_id", filters.probe);
  if (before) params.set("before", before);
  return `/incidents?${params}`;
}

/**
 * The filters: state, project, and a probe of that project.
 * @param {{ filters: Filters, onChange: (filters: Filters) => void }} props
 */
function IncidentFilters({ filters, onChange }) {
  const { data: projects } = useLoad(
    async () =>
      (await get("/projects")).data.map((/** @type {{ project: string }} */ p) => p.project),
    [],
  );
  const { data: probes } = useLoad(
    async () =>
      filters.project
        ? /** @type {{ probe_id: string, url: string, label?: string | null }[]} */ (
          (await get(`/projects/${seg(filters.project)}/probes`)).data
        )
        : [],
    [filters.project],
  );
  const selected = (/** @type {Event} */ e) =>
    /** @type {HTMLSelectElement} */ (e.currentTarget).value;
  return view`<div class="filters">
    <fieldset class="choices">
      <legend>Incidents</legend>
      ${
    STATES.map(([value, label]) =>
      view`<label class="choice" key=${value}>
          <input type="radio" name="incident-state" value=${value}
            checked=${filters.state === value}
            onChange=${() => onChange({ ...filters, state: value })} /> ${label}
        </label>`
    )
  }
    </fieldset>
    <div class="field">
      <label for="incident-project">Project</label>
      <select id="incident-project" value=${filters.project}
        onChange=${(/** @type {Event} */ e) =>
    onChange({ ...filters, project: selected(e), probe: "" })}>
        <option value="">All projects</option>
        ${
    (projects ?? []).map((/** @type {string} */ p) =>
      view`<option value=${p} key=${p}>${p}</option>`
    )
  }
      </select>
    </div>
    ${
    filters.project && view`<div class="field">
      <label for="incident-probe">Probe</label>
      <select id="incident-probe" value=${filters.probe}
        onChange=${(/** @type {Event} */ e) => onChange({ ...filters, probe: selected(e) })}>
        <option value="">All probes of ${filters.project}</option>
        ${
      (probes ?? []).map((p) =>
        view`<option value=${p.probe_id} key=${p.probe_id}>${p.label ?? p.url}</option>`
      )
    }
      </select>
    </div>`
  }
  </div>`;
}

/**
 * @param {{ incidents: Incident[], onChanged: () => void, caption: string }} props
 */
function IncidentRows({ incidents, onChanged, caption }) {
  return view`<div class="table-wrap">
    <table class="grid incidents-all">
      <caption class="sr-only">${caption}</caption>
      <thead>
        <tr>
          <th scope="col">Probe</th>
          <th scope="col">State</th>
          <th scope="col">Started</th>
          <th scope="col">Duration</th>
          <th scope="col">Cause</th>
          <th scope="col" class="num">Failed runs</th>
          <th scope="col">Acknowledged</th>
        </tr>
      </thead>
      <tbody>
        ${
    incidents.map((i) =>
      view`<tr key=${i.id} data-incident=${i.id}>
          <th scope="row" data-label="Probe">
            <a href=${href.probe(i.project, i.probe_id)}>${i.label}</a>
            <span class="url">in <a href=${href.project(i.project)}>${i.project}</a></span>
          </th>
          <td data-label="State">${
        i.state === "open"
          ? view`<span class="state state-down">open</span>`
          : view`<span class="state state-up">resolved</span>${" "}
              <span class="muted">${i.resolution}</span>`
      }</td>
          <td data-label="Started"><${At} iso=${i.started_at} /></td>
          <td data-label="Duration">${
        i.state === "open" ? `${duration(openFor(i))} so far` : duration(i.duration_seconds)
      }</td>
          <td data-label="Cause">${i.cause}${
        i.last_error && i.last_error !== i.cause
          ? view`<span class="url">last: <code>${i.last_error}</code></span>`
          : ""
      }${i.suppressed ? view`<span class="url">${i.suppressed}</span>` : ""}</td>
          <td data-label="Failed runs" class="num">${i.runs_failed}</td>
          <td data-label="Acknowledged">
            <${AcknowledgeButton} incident=${i} onDone=${onChanged} />
          </td>
        </tr>`
    )
  }
      </tbody>
    </table>
  </div>`;
}

/**
 * @param {{ query: string }} props the filters, from the fragment (`#/incidents?state=resolved`)
 */
export function IncidentsPage({ query: fromUrl }) {
  useTitle("Incidents");
  const [filters, setFilters] = useState(() => filtersOf(fromUrl));
  // The `before` of each page shown so far: the first page has none.
  const [cursors, setCursors] = useState(/** @type {(string | null)[]} */ ([null]));
  const size = usePageSize();
  // Another page size makes other pages: back to the first.
  useEffect(() => setCursors([null]), [size]);
  const before = cursors[cursors.length - 1];
  const { data, error, loading, reload } = useLoad(
    async () => {
      // The path as its template's type: the query's names are the operation's own (above).
      const path = /** @type {"/incidents"} */ (query(filters, before, size));
      const answer = await get(path);
      // The page the answer is for: the heading changes with the rows, not before them.
      return { ...answer, page: cursors.length };
    },
    [filters, before, cursors.length, size],
  );
  // Open, then resolved: the open ones come first, apart from the pages of resolved ones.
  const openFirst = filters.state === "all";
  const open = useLoad(
    async () =>
      openFirst
        ? await get(
          /** @type {"/incidents"} */ (query({ ...filters, state: "open" }, null, OPEN_FIRST)),
        )
        : null,
    [filters],
  );
  const reloadAll = () => {
    open.reload();
    reload();
  };
  // The first page is asked again every 30 s while the tab is visible, as the overview is:
  // new incidents come in at its top. Later pages stay as they are while they are read; the
  // open ones above them are asked again all the same.
  useEvery(REFRESH_MS, () => {
    open.reload();
    if (cursors.length === 1) reload();
  });
  const change = (/** @type {Filters} */ next) => {
    setCursors([null]);
    setFilters(next);
    // In the address too, so a reload or a bookmark keeps them; replaced, not a new page, so
    // focus stays on the filter and Back leaves the page.
    history.replaceState(history.state, "", href.incidents(queryOf(next)));
  };
  const incidents = data?.data ?? [];
  const next = data?.meta.next_before ?? null;
  const page = data?.page ?? cursors.length;
  const what = `${openFirst ? "resolved" : filters.state} `;
  const where = filters.project ? ` in ${filters.project}` : "";
  const opened = open.data?.data ?? [];
  return view`<div>
    <div class="page-head">
      <h1 tabindex="-1">Incidents</h1>
      <button type="button" onClick=${reloadAll} disabled=${loading}>Refresh</button>
    </div>
    <p class="muted">An incident opens when a probe goes down and is resolved when it recovers
      (or is changed, disabled or deleted). Newest first.</p>
    <${IncidentFilters} filters=${filters} onChange=${change} />
    <${ErrorNote} error=${error ?? open.error} />
    ${!data && loading && view`<${Loading} what="Loading the incidents" />`}
    ${
    openFirst && open.data && view`<section aria-labelledby="incident-open-title">
      <h2 id="incident-open-title">${
      opened.length === 0
        ? `No open incidents${where}`
        : `${opened.length} open incident${opened.length === 1 ? "" : "s"}${where}`
    }</h2>
      ${
      opened.length > 0 &&
      view`<${IncidentRows} incidents=${opened} onChanged=${reloadAll} caption="Open incidents" />`
    }
      ${
      open.data.meta.next_before && view`<p class="muted">The ${OPEN_FIRST} newest are listed.
        <button type="button" onClick=${() => change({ ...filters, state: "open" })}>
          Page through every open incident</button></p>`
    }
    </section>`
  }
    ${
    data && view`<section aria-labelledby="incident-list-title">
      <h2 id="incident-list-title">${
      incidents.length === 0
        ? `No ${what}incidents${where}`
        : `Page ${page}: ${incidents.length} ${what}incident${
          incidents.length === 1 ? "" : "s"
        }${where}`
    }</h2>
      ${
      incidents.length > 0 &&
      view`<${IncidentRows} incidents=${incidents} onChanged=${reloadAll}
        caption=${`Incidents, page ${page}`} />`
    }
      ${
      (page > 1 || next) && view`<nav class="pager" aria-label="Pages of incidents">
        <button type="button" disabled=${page === 1}
          onClick=${() => setCursors((c) => c.slice(0, -1))}>Previous page</button>
        <span>Page ${page}</span>
        <button type="button" disabled=${!next}
          onClick=${() => setCursors((c) => [...c, next])}>Next page</button>
      </nav>`
    }
    </section>`
  }
  </div>`;
}
