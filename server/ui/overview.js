// @ts-check
/**
 * The overview: open incidents, then every project with its probes' states (worst first), their
 * last runs as bars with the latest response time, last run, uptime over 24 hours, 7 and 30 days,
 * p95 latency and a 24-hour sparkline. One call to
 * `GET /api/v1/overview` fills it; probes are shown a page of 100 at a time, so 1,000 or 100,000
 * probes cost the browser the same to draw.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { view } from "./view.js";
import { useAbilities, useCanWrite } from "./scope.js";
import { getPrefetched } from "./api.js";
import { useEvery, useLoad, useTitle } from "./load.js";
import { href } from "./routes.js";
import { Ago, ErrorNote, FlappingBadge, Loading, StateBadge, UrlText } from "./parts.js";
import { RunBars, Sparkline } from "./charts.js";
import { OpenIncidents } from "./incidents.js";
import { BlockedBadge, BlockedNote } from "./blocked.js";
import { count, millis, percent, plural, since, utc } from "./format.js";
import { kindOf } from "./kinds.js";
import { heartbeatOfUrl } from "./heartbeats.js";
/** @import { OverviewProbe, OverviewProject } from "./api_types.d.ts" */
/** @typedef {OverviewProbe["state"]} ProbeState */
/** A project as shown on a page: some of its probes, `continued` from the page before. */
/** @typedef {OverviewProject & { continued: boolean }} Group */

/** Probes shown per page of the overview. */
export const PAGE_SIZE = 100;
const REFRESH_MS = 30_000;
/** @type {ProbeState[]} */
const STATES = ["down", "degraded", "unknown", "up"];
/** @type {Record<ProbeState, number>} */
const RANK = { down: 0, degraded: 1, unknown: 2, up: 3 };

const DAY_SECONDS = 86_400;
/** Bars in the row of last runs (the overview's `recent_runs` holds at most this many). */
const LAST_RUNS = 20;

/**
 * An uptime over a window; under it, when the probe is younger than the window, where its history
 * starts (`since 14:05`). When the history would fit the column before (a 15-minute-old probe's
 * 7 and 30 days), the figure would only repeat that column's: "—", and since when.
 * @param {{ label: string, share: number | null, historySince: string | null,
 *   windowSeconds: number, shorterSeconds: number }} props
 */
function UptimeCell({ label, share, historySince, windowSeconds, shorterSeconds }) {
  const age = historySince === null ? null : (Date.now() - Date.parse(historySince)) / 1000;
  const young = share !== null && age !== null && age < windowSeconds;
  const repeats = young && age !== null && age < shorterSeconds;
  return view`<td data-label=${label} class="num"><span class="uptime">${
    repeats ? "—" : percent(share)
  }${
    young && historySince && view`<span class="history">${since(historySince)}</span>`
  }</span></td>`;
}

/** @param {{ project: string, probe: OverviewProbe }} props */
function ProbeRow({ project, probe }) {
  const kind = kindOf(probe.url);
  // A heartbeat is watched through a probe of its own: its row leads to the heartbeat's page.
  const beat = heartbeatOfUrl(probe.url);
  return view`
    <tr class=${`row-${probe.state}`}>
      <td data-label="State">
        ${
    probe.blocked_reason === null
      ? view`<${StateBadge} state=${probe.state} /><${FlappingBadge} flapping=${probe.flapping} />`
      : view`<${BlockedBadge} reason=${probe.blocked_reason} />
          <${BlockedNote} reason=${probe.blocked_reason} />`
  }
      </td>
      <th scope="row" data-label="Probe">
          <a href=${
    beat === null ? href.probe(project, probe.probe_id) : href.heartbeat(project, beat)
  }>${probe.label ?? view`<${UrlText} url=${probe.url} />`}</a>
          ${
    beat !== null
      ? view`<span class="url"><span class="tag">heartbeat</span></span>`
      : kind.name !== "http"
      ? view`<span class="url"><span class="tag">${kind.tag}</span> ${
        probe.label ? view`<${UrlText} url=${probe.url} />` : ""
      }</span>`
      : (probe.label || probe.method !== "GET") &&
        view`<span class="url">${probe.method} ${
          probe.label ? view`<${UrlText} url=${probe.url} />` : ""
        }</span>`
  }
        </th>
      <td data-label="Last runs" class="last-runs">
        <${RunBars} runs=${probe.recent_runs} slots=${LAST_RUNS} />
        <span class="latency" title=${`The latest run's ${
    beat === null ? kind.measures : "time"
  }`}>${millis(probe.last_duration_ms)}</span>
      </td>
      <td data-label="Last run">
        <${Ago} iso=${probe.last_run_at} />
      </td>
      <${UptimeCell} label="Uptime 24 h" share=${probe.uptime_24h}
        historySince=${probe.history_since} windowSeconds=${DAY_SECONDS} shorterSeconds=${0} />
      <${UptimeCell} label="Uptime 7 d" share=${probe.uptime_7d}
        historySince=${probe.history_since} windowSeconds=${7 * DAY_SECONDS}
        shorterSeconds=${DAY_SECONDS} />
      <${UptimeCell} label="Uptime 30 d" share=${probe.uptime_30d}
        historySince=${probe.history_since} windowSeconds=${30 * DAY_SECONDS}
        shorterSeconds=${7 * DAY_SECONDS} />
      <td data-label="p95 24 h" class="num">${millis(probe.p95_24h)}</td>
      <td data-label="Last 24 h">
        <${Sparkline} values=${probe.sparkline} />
      </td>
    </tr>
  `;
}

/**
 * A project's probes as a table (a list of cards on narrow screens).
 * @param {{ project: string, probes: OverviewProbe[], caption: string }} props
 */
export function ProbeTable({ project, probes, caption }) {
  return view`
    <div class="table-wrap">
      <table class="grid probes">
        <caption class="sr-only">${caption}</caption>
        <thead>
          <tr>
            <th scope="col">State</th>
            <th scope="col">Probe</th>
            <th scope="col">Last runs</th>
            <th scope="col">Last run</th>
            <th scope="col" class="num">Uptime 24 h</th>
            <th scope="col" class="num">7 d</th>
            <th scope="col" class="num">30 d</th>
            <th scope="col" class="num">p95 24 h</th>
            <th scope="col">Last 24 h</th>
          </tr>
        </thead>
        <tbody>
          ${
    probes.map((probe) =>
      view`<${ProbeRow} key=${probe.probe_id} project=${project} probe=${probe} />`
    )
  }
        </tbody>
      </table>
    </div>
  `;
}

/**
 * Counts of probes by state, in the order they are shown.
 * @param {OverviewProbe[]} probes
 */
export function tally(probes) {
  /** @type {Record<ProbeState, number>} */
  const counts = { down: 0, degraded: 0, unknown: 0, up: 0 };
  for (const probe of probes) counts[probe.state]++;
  return counts;
}

const worst = (/** @type {OverviewProject} */ project) =>
  project.probes.reduce((rank, probe) => Math.min(rank, RANK[probe.state]), RANK.up + 1);

/**
 * Projects with a probe down first, then degraded, unknown, up; disabled ones last.
 * @param {OverviewProject[]} projects
 */
function order(projects) {
  return projects.toSorted((a, b) =>
    Number(a.status === "disabled") - Number(b.status === "disabled") || worst(a) - worst(b) ||
    (a.project < b.project ? -1 : a.project > b.project ? 1 : 0)
  );
}

/**
 * Splits the projects shown into pages of at most `size` probes; a project longer than what is
 * left of a page goes on over the next (marked `continued`). A project without probes takes one.
 * @param {OverviewProject[]} groups
 * @param {number} size
 */
export function paginate(groups, size) {
  /** @type {Group[][]} */
  const pages = [[]];
  let used = 0;
  for (const group of groups) {
    let start = 0;
    do {
      if (used >= size) {
        pages.push([]);
        used = 0;
      }
      const take = Math.min(size - used, group.probes.length - start);
      pages[pages.length - 1].push({
        ...group,
        probes: group.probes.slice(start, start + take),
        continued: start > 0,
      });
      used += Math.max(take, 1);
      start += take;
    } while (start < group.probes.length);
  }
  return pages;
}

/**
 * @param {string | null} text
 * @param {string} query
 */
function matches(text, query) {
  return text !== null && text.toLowerCase().includes(query);
}

/**
 * The projects and probes the filters let through.
 * @param {OverviewProject[]} projects
 * @param {string} query
 * @param {string} state `all`, or a probe's state
 */
function select(projects, query, state) {
  const q = query.trim().toLowerCase();
  /** @type {OverviewProject[]} */
  const groups = [];
  for (const project of projects) {
    const projectHit = !q || matches(project.project, q) || matches(project.label, q);
    const probes = project.probes.filter((p) =>
      (state === "all" || p.state === state) &&
      (projectHit || matches(p.label, q) || matches(p.url, q))
    );
    if (probes.length > 0 || (projectHit && state === "all")) groups.push({ ...project, probes });
  }
  return groups;
}

/** @param {{ group: Group }} props */
function ProjectGroup({ group }) {
  const canWrite = useCanWrite();
  const counts = tally(group.probes);
  const id = `project-${group.project}`;
  const title = group.label ? `${group.label} (${group.project})` : group.project;
  return view`<section class="project" aria-labelledby=${id}>
    <div class="project-head">
      <h2 id=${id}>
        <a href=${href.project(group.project)}>${title}</a>
        ${group.continued && view`<span class="muted"> (continued)</span>`}
      </h2>
      ${group.status === "disabled" && view`<span class="tag">disabled</span>`}
      <span class="muted">${
    STATES.filter((s) => counts[s]).map((s) => `${counts[s]} ${s}`).join(" · ")
  }</span>
    </div>
    ${
    group.probes.length === 0
      ? view`<p class="muted">No probes${group.continued ? "" : " yet"}.${
        canWrite && view` <a href=${href.newProbe(group.project)}>Add a probe</a>`
      }</p>`
      : view`
        <${ProbeTable} project=${group.project} probes=${group.probes}
          caption=${`Probes of ${group.project}`} />
      `
  }
  </section>`;
}

/**
 * Marks the first overview drawn on this page load (`data-overview-drawn`, ms since load).
 * @param {boolean} ready
 */
function useDrawnMark(ready) {
  useEffect(() => {
    const root = document.documentElement;
    if (!ready || root.dataset.overviewDrawn) return;
    // After the frame that shows it has been painted.
    requestAnimationFrame(() =>
      setTimeout(() => {
        performance.mark("overview-drawn");
        root.dataset.overviewDrawn = String(Math.round(performance.now()));
      })
    );
  }, [ready]);
}

/**
 * @param {{
 *   counts: Record<ProbeState, number>,
 *   total: number,
 *   value: string,
 *   onChange: (state: string) => void,
 * }} props
 */
function StateFilter({ counts, total, value, onChange }) {
  /**
   * @param {string} state
   * @param {string} label
   */
  const option = (state, label) =>
    view`<label class="choice">
      <input type="radio" name="state-filter" value=${state} checked=${value === state}
        onChange=${() => onChange(state)} />
      ${label}
    </label>`;
  return view`<fieldset class="choices">
    <legend>Show</legend>
    ${option("all", `All (${count(total)})`)}
    ${STATES.map((s) => option(s, `${s[0].toUpperCase()}${s.slice(1)} (${count(counts[s])})`))}
  </fieldset>`;
}

export function Overview() {
  const canCreate = useAbilities().createProjects;
  useTitle("Overview");
  const { data, error, loading, reload } = useLoad(() => getPrefetched("/overview"), []);
  useEvery(REFRESH_MS, reload);
  const [query, setQuery] = useState("");
  const [state, setState] = useState("all");
  const [page, setPage] = useState(0);
  const listTop = useRef(/** @type {HTMLDivElement | null} */ (null));
  useDrawnMark(data !== undefined);

  const projects = useMemo(() => (data ? order(data.data.projects) : []), [data]);
  const allProbes = useMemo(() => projects.flatMap((p) => p.probes), [projects]);
  const counts = useMemo(() => tally(allProbes), [allProbes]);
  const pages = useMemo(() => paginate(select(projects, query, state), PAGE_SIZE), [
    projects,
    query,
    state,
  ]);
  const shown = Math.min(page, pages.length - 1);
  const probesShown = pages.reduce((n, p) => n + p.reduce((m, g) => m + g.probes.length, 0), 0);
  const first = pages.slice(0, shown).reduce(
    (n, p) => n + p.reduce((m, g) => m + g.probes.length, 0),
    0,
  );
  const onPage = pages[shown].reduce((m, g) => m + g.probes.length, 0);

  /** @param {(value: string) => void} setter */
  const filterBy = (setter) => (/** @type {string} */ value) => {
    setter(value);
    setPage(0);
  };
  /** @param {{ currentTarget: HTMLInputElement }} event */
  const filterText = (event) => filterBy(setQuery)(event.currentTarget.value);
  const go = (/** @type {number} */ to) => {
    setPage(to);
    listTop.current?.scrollIntoView({ block: "start" });
  };

  return view`
    <div class="overview">
      <div class="page-head">
        <h1 tabindex="-1">Overview</h1>
        <div class="actions">
          ${canCreate && view`<a class="button" href=${href.newProject()}>New project</a>`}
          <button type="button" onClick=${reload} disabled=${loading}>
              ${loading && data ? "Refreshing…" : "Refresh"}
            </button>
        </div>
      </div>
      <${ErrorNote} error=${error}>Could not load the overview: <//>
        ${!data && loading && view`<${Loading} what="Loading the overview" />`}
        ${
    data && view`
          <p class="muted summary">
            ${plural(data.meta.probes, "probe")} in ${plural(data.meta.projects, "project")};
            updated <time datetime=${data.meta.generated_at}>${utc(data.meta.generated_at)}</time>
          </p>
          <${OpenIncidents} incidents=${data.data.incidents} onChanged=${reload} />
          ${
      projects.length === 0
        ? view`<p>No projects yet.${
          canCreate && view` <a href=${href.newProject()}>Create the first project</a>.`
        }</p>`
        : view`
              <div class="filters" ref=${listTop}>
                <${StateFilter} counts=${counts} total=${allProbes.length} value=${state}
                  onChange=${filterBy(setState)} />
                <div class="field search">
                  <label for="overview-filter">Filter by project, label or URL</label>
                  <input id="overview-filter" type="search" value=${query}
                    onInput=${filterText} />
                </div>
              </div>
              ${
          probesShown === 0 && pages[0].length === 0
            ? view`<p class="muted">Nothing matches this filter.</p>`
            : pages[shown].map((group) =>
              view`<${ProjectGroup} key=${`${group.project}:${group.continued}`} group=${group} />`
            )
        }
              ${
          pages.length > 1 && view`
                <nav class="pager" aria-label="Overview pages">
                  <button type="button" disabled=${shown === 0} onClick=${() => go(shown - 1)}>
                              Previous page
                            </button>
                  <span aria-live="polite">
                              Page ${shown + 1} of ${pages.length}: probes ${
            count(
              first + (onPage ? 1 : 0),
            )
          }–${count(first + onPage)} of ${count(probesShown)}
                            </span>
                  <button type="button" disabled=${shown >= pages.length - 1} onClick=${() =>
            go(shown + 1)}>
                              Next page
                            </button>
                </nav>
              `
        }
            `
    }
        `
  }
      </div>
  `;
}
