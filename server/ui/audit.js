// @ts-check
/**
 * The audit log (`GET /audit-log`, admins only): who changed what, when and from where, newest
 * first, 50 to a page, filtered by actor, resource (`probe`, or `project:shop`), since and before.
 * Each entry opens to show the fields it changed, before and after (secrets already masked by the
 * service). The filters are the page's state, not the URL's: the log is read, not linked to.
 */
import { useState } from "preact/hooks";
import { view } from "./view.js";
import { get } from "./api.js";
import { useLoad, useTitle } from "./load.js";
import { At, ErrorNote, Loading } from "./parts.js";

/** @typedef {{ actor: string, resource: string, since: string, before: string }} Filters */

/** Entries per page. */
const PAGE = 50;
const NO_FILTERS = { actor: "", resource: "", since: "", before: "" };

/**
 * A `datetime-local` value (the browser's local time) as the API's instant; empty stays empty.
 * @param {string} local
 */
const instantOf = (local) => (local ? new Date(local).toISOString() : "");

/**
 * The list's query for some filters and a page's cursor: `limit=50&…`, then only the filters
 * given (the operation takes every one of them).
 * @param {Filters} filters
 * @param {string | null} after
 * @returns {`limit=${number}${string}`}
 */
export function auditQuery(filters, after) {
  const params = new URLSearchParams();
  if (filters.actor) params.set("actor", filters.actor);
  if (filters.resource) params.set("resource", filters.resource);
  if (filters.since) params.set("since", instantOf(filters.since));
  if (filters.before) params.set("before", instantOf(filters.before));
  if (after) params.set("after", after);
  const rest = params.toString();
  return `limit=${PAGE}${rest ? `&${rest}` : ""}`;
}

/** @param {{ value: unknown }} props */
function Fields({ value }) {
  if (value === null || value === undefined) return view`<span class="muted">—</span>`;
  return view`<pre class="audit-fields">${JSON.stringify(value, null, 2)}</pre>`;
}

export function AuditPage() {
  useTitle("Audit log");
  const [filters, setFilters] = useState(/** @type {Filters} */ (NO_FILTERS));
  const [draft, setDraft] = useState(/** @type {Filters} */ (NO_FILTERS));
  /** The cursors of the pages before this one, and this one's (null: the newest). */
  const [pages, setPages] = useState(/** @type {(string | null)[]} */ ([null]));
  const after = pages[pages.length - 1];
  const list = useLoad(
    () => get(`/audit-log?${auditQuery(filters, after)}`),
    [filters, after],
  );
  /** @param {Event} event */
  const apply = (event) => {
    event.preventDefault();
    setFilters(draft);
    setPages([null]);
  };
  /** @param {keyof Filters} name */
  const field = (name) => (/** @type {Event} */ event) =>
    setDraft({ ...draft, [name]: /** @type {HTMLInputElement} */ (event.target).value });
  const entries = list.data?.data ?? [];
  const next = list.data?.meta.next_after ?? null;
  return view`
    <div>
      <h1 tabindex="-1">Audit log</h1>
      <p class="muted">
        Every change made through the API, the dashboard, the CLI and the client, and the
        operator's restores: who, when, from where, and the fields changed (secrets masked).
      </p>
      <form class="filters" onSubmit=${apply} aria-label="Filters">
        <div class="field">
          <label for="audit-actor">Actor</label>
          <input id="audit-actor" name="actor" value=${draft.actor} onInput=${field("actor")}
            placeholder="a key's name or a user" />
        </div>
        <div class="field">
          <label for="audit-resource">Resource</label>
          <input id="audit-resource" name="resource" value=${draft.resource}
            onInput=${field("resource")} placeholder="probe, or project:shop" />
        </div>
        <div class="field">
          <label for="audit-since">Since</label>
          <input id="audit-since" type="datetime-local" name="since" value=${draft.since}
            onInput=${field("since")} />
        </div>
        <div class="field">
          <label for="audit-before">Before</label>
          <input id="audit-before" type="datetime-local" name="before" value=${draft.before}
            onInput=${field("before")} />
        </div>
        <div class="field"><button type="submit">Filter</button></div>
      </form>
      <${ErrorNote} error=${list.error}>Could not read the audit log: <//>
      ${list.loading && !list.data && view`<${Loading} />`}
      ${
    list.data && entries.length === 0 &&
    view`<p class="muted">No entries${filters === NO_FILTERS ? "" : " match"}.</p>`
  }
      ${
    entries.length > 0 && view`
        <div class="table-wrap">
        <table class="grid audit">
          <caption class="sr-only">Audit log entries, newest first</caption>
          <thead>
            <tr><th scope="col">When</th><th scope="col">Actor</th><th scope="col">Operation</th>
              <th scope="col">Resource</th><th scope="col">From</th><th scope="col">Change</th></tr>
          </thead>
          <tbody>
            ${
      entries.map((e) =>
        view`<tr key=${e.id}>
              <td data-label="When"><${At} iso=${e.at} /></td>
              <td data-label="Actor">${e.actor} <span class="muted">${e.actor_source}</span></td>
              <td data-label="Operation"><code>${e.operation}</code></td>
              <td data-label="Resource">${e.resource.type}${
          e.resource.id && view` <code>${e.resource.id}</code>`
        }</td>
              <td data-label="From">${e.address ?? "—"}<br /><span class="muted">${
          e.user_agent ?? ""
        }</span></td>
              <td data-label="Change">
                ${
          e.before === null && e.after === null
            ? view`<span class="muted">—</span>`
            : view`<details>
                  <summary>${
              Object.keys(e.after ?? e.before ?? {}).join(", ") || "no field"
            }</summary>
                  <div class="audit-change">
                    <div><strong>Before</strong><${Fields} value=${e.before} /></div>
                    <div><strong>After</strong><${Fields} value=${e.after} /></div>
                  </div>
                </details>`
        }
              </td>
            </tr>`
      )
    }
          </tbody>
        </table>
        </div>`
  }
      <p class="pager">
        ${
    pages.length > 1 &&
    view`<button type="button" onClick=${() => setPages(pages.slice(0, -1))}>Newer</button>`
  }
        ${
    next && view`<button type="button" onClick=${() => setPages([...pages, next])}>Older</button>`
  }
      </p>
    </div>
  `;
}
