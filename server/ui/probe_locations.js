// @ts-check
/**
 * The probe page's view by location (issue 21), for a probe that runs from more than one place:
 * each location's latest result (outcome, latency, when) with its 24-hour uptime and p95, and the
 * latency chart with one line (p95 per bucket) per location, from `…/results`, `…/stats` and
 * `…/series` with `?location=`.
 */
import uPlot from "uplot";
import { useEffect, useRef, useState } from "preact/hooks";
import { view } from "./view.js";
import { get, probePath, seg } from "./api.js";
import { useLoad } from "./load.js";
import { Ago, ErrorNote, Loading, OutcomeBadge } from "./parts.js";
import { millis, percent } from "./format.js";
import { latencyAxes, TIME_SERIES, tzDate, useFittedWindow } from "./charts.js";

/** @import { operations as Operations } from "./openapi.gen.ts" */
/**
 * @typedef {Operations["results-list"]["responses"][200]["content"]["application/json"]}
 *   ResultList
 * @typedef {Operations["results-stats"]["responses"][200]["content"]["application/json"]}
 *   StatsAnswer
 * @typedef {Operations["results-series"]["responses"][200]["content"]["application/json"]}
 *   SeriesAnswer
 * @typedef {SeriesAnswer["data"]} Series
 * @typedef {{ location: string, last: ResultList["data"][number] | null,
 *   stats: StatsAnswer["data"] }} LocationLine
 */

/** The probe's chart's windows, 1 hour to 90 days. */
const WINDOWS = /** @type {const} */ ([
  ["1h", "1 hour"],
  ["6h", "6 hours"],
  ["24h", "24 hours"],
  ["7d", "7 days"],
  ["30d", "30 days"],
  ["90d", "90 days"],
]);
const CHART_HEIGHT = 220;
/** Line colours, cycled; each line also has its own dash so colour is not all that tells them. */
const COLORS = ["--chart-p50", "--chart-p95", "--chart-max", "--chart-loc-4", "--chart-loc-5"];
const DASHES = [[], [8, 4], [2, 3], [12, 3, 2, 3], [4, 4]];

/**
 * Each location's latest result and 24-hour figures.
 * @param {{ lines: LocationLine[] }} props
 */
function LatestByLocation({ lines }) {
  return view`
    <div class="table-wrap">
      <table class="grid by-location">
        <caption class="sr-only">The latest result from each location</caption>
        <thead>
          <tr>
            <th scope="col">Location</th>
            <th scope="col">Latest outcome</th>
            <th scope="col" class="num">Latency</th>
            <th scope="col">When</th>
            <th scope="col" class="num">Uptime 24 h</th>
            <th scope="col" class="num">p95 24 h</th>
          </tr>
        </thead>
        <tbody>
          ${
    lines.map((l) =>
      view`
            <tr key=${l.location} data-location=${l.location}>
              <th scope="row" data-label="Location">${l.location}</th>
              <td data-label="Latest outcome"><${OutcomeBadge} outcome=${l.last?.outcome} />${
        l.last?.error ? view` <code>${l.last.error}</code>` : ""
      }</td>
              <td data-label="Latency" class="num">${millis(l.last?.duration_ms)}</td>
              <td data-label="When"><${Ago} iso=${l.last?.started_at} /></td>
              <td data-label="Uptime 24 h" class="num">${percent(l.stats.uptime)}</td>
              <td data-label="p95 24 h" class="num">${millis(l.stats.p95)}</td>
            </tr>
          `
    )
  }
        </tbody>
      </table>
    </div>
  `;
}

/**
 * The p95 of each bucket, one line per location (the buckets of every location's series are the
 * same: one window, one bucket size).
 * @param {{ names: string[], series: Series[] }} props
 */
function LocationLatencyChart({ names, series }) {
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  useEffect(() => {
    const element = box.current;
    if (!element || series.length === 0) return;
    const style = getComputedStyle(document.documentElement);
    const read = (/** @type {string} */ name) => style.getPropertyValue(name).trim();
    /** @type {uPlot.AlignedData} */
    const data = [
      series[0].buckets.map((b) => Date.parse(b.start) / 1000),
      ...series.map((s) => s.buckets.map((b) => b.p95)),
    ];
    const plot = new uPlot(
      {
        width: Math.max(element.clientWidth, 280),
        height: CHART_HEIGHT,
        tzDate,
        scales: {
          x: { time: true },
          y: { range: (_u, _min, max) => [0, Math.max(max ?? 0, 1) * 1.1] },
        },
        // Room above the top label and right of the last time label, as on the probe's own chart.
        padding: [14, 24, 0, 0],
        axes: latencyAxes({ text: read("--fg-muted"), grid: read("--border") }),
        series: [
          TIME_SERIES,
          ...names.map((name, i) => {
            const stroke = read(COLORS[i % COLORS.length]) || read("--fg");
            return {
              label: `${name} p95`,
              stroke,
              width: 2,
              dash: DASHES[i % DASHES.length],
              spanGaps: false,
              points: { show: true, size: 5, fill: stroke },
              value: (/** @type {uPlot} */ _u, /** @type {number | null} */ v) => millis(v),
            };
          }),
        ],
        cursor: { drag: { x: false, y: false } },
      },
      data,
      element,
    );
    const resize = new ResizeObserver(() => {
      plot.setSize({ width: Math.max(element.clientWidth, 280), height: CHART_HEIGHT });
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [names.join("\u0000"), series]);
  return view`<div class="chart" ref=${box} data-series=${names.length}></div>`;
}

/**
 * The chart in words: each location's p95 range.
 * @param {string[]} names
 * @param {Series[]} series
 */
function byLocationSummary(names, series) {
  return names.map((name, i) => {
    const p95s = series[i].buckets.flatMap((b) => b.p95 === null ? [] : [b.p95]);
    if (p95s.length === 0) return `${name}: no responses`;
    return `${name}: p95 from ${millis(Math.min(...p95s))} to ${millis(Math.max(...p95s))}`;
  }).join("; ") + ".";
}

/**
 * A probe's results per location (the page shows it for a probe that runs from more than one).
 * The chart opens as the probe's own does, on the smallest window that holds the history.
 * @param {{ project: string, probeId: string, locations: string[], round: number,
 *   initialWindow: Series["window"] }} props
 */
export function ProbeLocations({ project, probeId, locations, round, initialWindow }) {
  const [answer, setAnswer] = useState(/** @type {Series | undefined} */ (undefined));
  const [window, setWindow] = useFittedWindow(initialWindow, answer);
  const base = probePath(project, probeId);
  const latest = useLoad(
    () =>
      Promise.all(locations.map(async (location) => {
        const [results, stats] = await Promise.all([
          get(`${base}/results?limit=1&location=${seg(location)}`),
          get(`${base}/stats?window=24h&location=${seg(location)}`),
        ]);
        return { location, last: results.data[0] ?? null, stats: stats.data };
      })),
    [project, probeId, locations],
    round,
  );
  const charted = useLoad(
    () =>
      Promise.all(
        locations.map((location) =>
          get(`${base}/series?window=${window}&location=${seg(location)}`)
        ),
      ),
    [project, probeId, locations, window],
    round,
  );
  const lines = /** @type {LocationLine[] | undefined} */ (latest.data);
  const series = /** @type {SeriesAnswer[] | undefined} */ (charted.data)?.map((s) => s.data);
  // The window fits the oldest history of any location.
  useEffect(() => {
    const oldest = series?.toSorted((a, b) =>
      Date.parse(a.history_since ?? a.until) - Date.parse(b.history_since ?? b.until)
    )[0];
    setAnswer(oldest);
  }, [charted.data]);
  return view`
    <section aria-labelledby="locations-title" data-window=${window}>
      <h2 id="locations-title">By location</h2>
      <${ErrorNote} error=${latest.error}>Could not load the results by location: <//>
      ${!lines && latest.loading && view`<${Loading} what="Loading the results by location" />`}
      ${lines && view`<${LatestByLocation} lines=${lines} />`}
      <fieldset class="choices">
        <legend>Window of the chart by location</legend>
        ${
    WINDOWS.map(([w, label]) =>
      view`<label class="choice">
          <input type="radio" name="location-window" value=${w} checked=${window === w}
            onChange=${() => setWindow(w)} />
          ${label}
        </label>`
    )
  }
      </fieldset>
      <${ErrorNote} error=${charted.error}>Could not load the series by location: <//>
      ${
    series && view`
        <figure class="figure">
          <${LocationLatencyChart} names=${locations} series=${series} />
          <figcaption>p95 latency per bucket, one line per location. ${
      byLocationSummary(locations, series)
    }</figcaption>
        </figure>
      `
  }
    </section>
  `;
}
