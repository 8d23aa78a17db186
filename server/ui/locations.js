/** The locations probes run from, with their runners' health (read-only: the API changes them). */
import { view } from "./view.js";
import { get } from "./api.js";
import { useEvery, useLoad, useTitle } from "./load.js";
import { Ago, ErrorNote, Loading } from "./parts.js";

const REFRESH_MS = 15_000;

export function LocationsPage() {
  useTitle("Locations");
  const { data, error, loading, reload } = useLoad(() => get("/locations"), []);
  useEvery(REFRESH_MS, reload);
  const locations = data?.data ?? [];
  return view`<div>
    <h1 tabindex="-1">Locations</h1>
    <p class="muted">
      Where probes run from. Remote locations and their tokens are made with the API or
      <code>deno task cli locations add</code>; their runners run <code>deno task runner:remote</code>.
    </p>
    <${ErrorNote} error=${error} />
    ${!data && loading && view`<${Loading} what="Loading the locations" />`}
    ${
    data && view`
      <div class="table-wrap">
        <table class="grid">
          <caption class="sr-only">Locations, the built-in one first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col" class="num">Probes</th>
              <th scope="col" class="num">Runners</th>
              <th scope="col">Last seen</th>
              <th scope="col">Version</th>
              <th scope="col" class="num">Checks a minute</th>
              <th scope="col" class="num">Behind</th>
            </tr>
          </thead>
          <tbody>
            ${
      locations.map((l) =>
        view`
              <tr key=${l.name}>
                <td data-label="Name">${l.name}${
          l.label ? view` <span class="muted">${l.label}</span>` : ""
        }</td>
                <td data-label="Kind">${l.kind}</td>
                <td data-label="Probes" class="num">${l.probes}</td>
                <td data-label="Runners" class="num">${l.runners}</td>
                <td data-label="Last seen"><${Ago} iso=${l.last_seen_at} /></td>
                <td data-label="Version">${l.version ?? "—"}</td>
                <td data-label="Checks a minute" class="num">${l.checks_per_minute}</td>
                <td data-label="Behind" class="num">${Math.round(l.lag_seconds)} s</td>
              </tr>
            `
      )
    }
          </tbody>
        </table>
      </div>
    `
  }
  </div>`;
}
