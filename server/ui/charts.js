// @ts-check
/**
 * The probe page's charts: latency per bucket (p50, p95, max) drawn by uPlot on a canvas, the
 * outcome of each bucket as a strip of bars, and the overview's 24-hour sparkline. Times read as
 * everywhere on the page: 24-hour, UTC, ISO-like (`2026-11-24 14:05`). The strip
 * and the sparkline are small SVGs; each chart has a text summary for screen readers.
 */
import uPlot from "uplot";
import { useEffect, useRef, useState } from "preact/hooks";
import { view } from "./view.js";
import { millis, percent, utc } from "./format.js";
/** @import { Bucket, Series } from "./api_types.d.ts" */

const CHART_HEIGHT = 240;

/** The chart colours of the current scheme, from the page's CSS variables. */
function palette() {
  const style = getComputedStyle(document.documentElement);
  const read = (/** @type {string} */ name) => style.getPropertyValue(name).trim();
  return {
    text: read("--fg-muted"),
    grid: read("--border"),
    p50: read("--chart-p50"),
    p95: read("--chart-p95"),
    max: read("--chart-max"),
  };
}

/** Re-renders when the system switches between light and dark. */
function useScheme() {
  const [dark, setDark] = useState(() => matchMedia("(prefers-color-scheme: dark)").matches);
  useEffect(() => {
    const query = matchMedia("(prefers-color-scheme: dark)");
    const changed = () => setDark(query.matches);
    query.addEventListener("change", changed);
    return () => query.removeEventListener("change", changed);
  }, []);
  return dark;
}

const seconds = (/** @type {string} */ iso) => Date.parse(iso) / 1000;

/**
 * Axis labels: `250 ms`, `1.5 s`, `12.5 ms`.
 * @param {number} v
 */
const axisMillis = (v) => (v >= 1000 ? `${+(v / 1000).toFixed(2)} s` : `${+v.toFixed(1)} ms`);

/** The axes' font, set here so that the y axis can measure its widest label with it. */
const AXIS_FONT = "12px system-ui, sans-serif";
const TICK_SIZE = 6;
const AXIS_GAP = 5;
/** @type {CanvasRenderingContext2D | null} */
let measurer = null;

/**
 * How wide a text is in the axes' font, in CSS pixels.
 * @param {string} text
 */
function textWidth(text) {
  measurer ??= document.createElement("canvas").getContext("2d");
  if (!measurer) return text.length * 8;
  measurer.font = AXIS_FONT;
  return measurer.measureText(text).width;
}

/**
 * The y axis is as wide as its widest label (plus the ticks and a margin), so `12.5 ms` is never
 * cut at the left edge.
 * @param {readonly (string | number)[] | null | undefined} labels
 */
export function yAxisSize(labels) {
  const widest = Math.max(0, ...(labels ?? []).map((l) => textWidth(String(l))));
  return Math.ceil(widest + TICK_SIZE + AXIS_GAP + 6);
}

/**
 * Time-axis labels in the page's one time format (24-hour, UTC, ISO-like): `14:05`, with the date
 * (`11-24`) on a second line at the first tick and at each midnight; days alone (`11-24`) when the
 * ticks are a day or more apart.
 * @param {number[]} ticks Unix seconds.
 * @param {number} step Seconds between ticks.
 * @returns {string[]}
 */
export function timeTicks(ticks, step) {
  return ticks.map((t, i) => {
    const text = new Date(t * 1000).toISOString();
    const day = text.slice(5, 10);
    if (step >= 86_400) return day;
    const time = text.slice(11, 16);
    return i === 0 || time === "00:00" ? `${time}\n${day}` : time;
  });
}

/**
 * The axes of a latency chart, read as the rest of the page: time in 24-hour UTC (`timeTicks`),
 * latency in ms or s, the y axis as wide as its widest label.
 * @param {{ text: string, grid: string }} colors
 * @returns {uPlot.Axis[]}
 */
export function latencyAxes(colors) {
  const axis = {
    stroke: colors.text,
    font: AXIS_FONT,
    gap: AXIS_GAP,
    grid: { stroke: colors.grid },
    ticks: { stroke: colors.grid, size: TICK_SIZE },
  };
  return [
    {
      ...axis,
      size: 48,
      // The labels drawn are also kept on the chart (`data-ticks`): a canvas's text is not in the
      // page, and a test or a reader's tool can read them there.
      values: (u, ticks, _i, _space, step) => {
        const labels = timeTicks(ticks, step);
        u.root.dataset.ticks = labels.join(" | ");
        return labels;
      },
    },
    {
      ...axis,
      size: (_u, labels) => yAxisSize(labels),
      values: (_u, values) => values.map(axisMillis),
    },
  ];
}

/** The chart's x series: times in UTC, as the legend shows them. */
export const TIME_SERIES = {
  label: "Time (UTC)",
  value: (/** @type {uPlot} */ _u, /** @type {number | null} */ v) =>
    v == null ? "—" : utc(new Date(v * 1000).toISOString(), { seconds: false }),
};

/** Times of the buckets are UTC (days for 30 and 90 days): the axis shows UTC too. */
export const tzDate = (/** @type {number} */ ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC");

/**
 * Latency per bucket: p50, p95 and max, in ms; gaps where a bucket had no response.
 * @param {{ series: Series }} props
 */
export function LatencyChart({ series }) {
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  const dark = useScheme();
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const colors = palette();
    const buckets = series.buckets;
    /** @type {uPlot.AlignedData} */
    const data = [
      buckets.map((b) => seconds(b.start)),
      buckets.map((b) => b.p50),
      buckets.map((b) => b.p95),
      buckets.map((b) => b.max),
    ];
    // Few buckets with data (a new probe): each is drawn as a dot, as a lone value makes no line.
    const sparse = countPoints(series) <= 60;
    /**
     * @param {string} label
     * @param {string} stroke
     * @param {number} width
     * @returns {uPlot.Series}
     */
    const line = (label, stroke, width) => ({
      label,
      stroke,
      width,
      spanGaps: false,
      points: { show: sparse, size: 6, fill: stroke },
      value: (_u, v) => millis(v),
    });
    const plot = new uPlot(
      {
        width: Math.max(element.clientWidth, 280),
        height: CHART_HEIGHT,
        tzDate,
        scales: {
          x: { time: true },
          y: { range: (_u, _min, max) => [0, Math.max(max ?? 0, 1) * 1.1] },
        },
        // Room above the top label and right of the last time label ("20:45" is centred on its
        // tick), so that neither is cut.
        padding: [14, 24, 0, 0],
        axes: latencyAxes(colors),
        series: [
          TIME_SERIES,
          line("p50", colors.p50, 2),
          line("p95", colors.p95, 2),
          line("max", colors.max, 1),
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
  }, [series, dark]);
  return view`<div class="chart" ref=${box} data-points=${countPoints(series)}></div>`;
}

/** @param {Series} series */
function countPoints(series) {
  return series.buckets.filter((b) => b.p50 !== null || b.max !== null).length;
}

/**
 * What the latency chart shows, in words.
 * @param {Series} series
 */
export function latencySummary(series) {
  const withData = series.buckets.filter((b) => b.p95 !== null);
  if (withData.length === 0) return "No responses in this window.";
  const p95s = withData.map((b) => b.p95 ?? 0);
  const maxes = withData.map((b) => b.max ?? 0);
  return `p95 per bucket from ${millis(Math.min(...p95s))} to ${millis(Math.max(...p95s))}; ` +
    `slowest response ${millis(Math.max(...maxes))}.`;
}

/**
 * The worst outcome a bucket holds: what its bar shows. Blocked runs (the network policy refused
 * the target: never tried) are no failure; a bucket of them alone says so.
 * @param {Bucket} bucket
 * @returns {"down" | "degraded" | "up" | "blocked" | "maintenance" | "none"}
 */
export function bucketOutcome(bucket) {
  if (bucket.down > 0) return "down";
  if (bucket.degraded > 0) return "degraded";
  if (bucket.up > 0) return "up";
  if (bucket.blocked > 0) return "blocked";
  if (bucket.maintenance > 0) return "maintenance";
  return "none";
}

/** @param {Bucket} bucket */
function bucketText(bucket) {
  const parts = [`${bucket.runs} runs`];
  for (const key of /** @type {const} */ (["up", "degraded", "down", "blocked", "maintenance"])) {
    if (bucket[key] > 0) parts.push(`${bucket[key]} ${key}`);
  }
  return `${utc(bucket.start, { seconds: false })}: ${parts.join(", ")}`;
}

/**
 * One bar per bucket, coloured by its worst outcome; hover shows the counts.
 * @param {{ series: Series }} props
 */
export function OutcomeStrip({ series }) {
  const n = series.buckets.length;
  const tally = { up: 0, degraded: 0, down: 0, blocked: 0, maintenance: 0, none: 0 };
  for (const b of series.buckets) tally[bucketOutcome(b)]++;
  const label = `Outcome per bucket: ${tally.up} all up, ${tally.degraded} degraded, ` +
    `${tally.down} with failures, ${tally.blocked} blocked, ${tally.maintenance} in maintenance, ` +
    `${tally.none} without runs`;
  return view`
    <svg class="strip" viewBox=${`0 0 ${n} 10`} preserveAspectRatio="none"
      role="img" aria-label=${label} data-buckets=${n}>
        ${
    series.buckets.map((b, i) =>
      view`
            <rect x=${i + 0.1} y="0" width="0.8" height="10" class=${`o-${bucketOutcome(b)}`}>
              <title>${bucketText(b)}</title>
            </rect>
          `
    )
  }
      </svg>
  `;
}

/**
 * The last 24 hours of a probe, hour by hour: bar height and colour follow uptime. It stretches to
 * the width of its cell (CSS), so the 24 bars fill the space they have.
 * @param {{ values: (number | null)[] }} props
 */
export function Sparkline({ values }) {
  const known = values.filter((v) => v !== null);
  const lowest = known.length ? Math.min(...known) : null;
  const label = lowest === null
    ? "No runs in the last 24 hours"
    : `Hourly uptime, last 24 hours: lowest ${percent(lowest)}`;
  const width = values.length * 3;
  return view`
    <svg class="spark" viewBox=${`0 0 ${width} 20`} preserveAspectRatio="none" role="img"
      aria-label=${label} data-bars=${values.length}>
        ${
    values.map((v, i) => {
      const height = v === null ? 2 : Math.max(3, Math.round(v * 20));
      const tone = v === null ? "none" : v >= 1 ? "up" : v >= 0.9 ? "degraded" : "down";
      return view`<rect x=${i * 3 + 0.25} y=${
        20 - height
      } width="2.5" height=${height} class=${`o-${tone}`} />`;
    })
  }
      </svg>
  `;
}

/** What each of the last runs' outcomes is called, and the colour its bar takes. */
const RUN_WORDS = {
  up: ["up", "up"],
  degraded: ["degraded", "degraded"],
  down: ["down", "down"],
  blocked: ["blocked", "maintenance"],
  maintenance: ["in maintenance", "maintenance"],
};

/**
 * The last runs in words: `20 runs, oldest first: 18 up, 2 down; the last up`.
 * @param {readonly (keyof typeof RUN_WORDS)[]} runs
 */
export function runsText(runs) {
  if (runs.length === 0) return "No runs in the last 24 hours";
  /** @type {Map<string, number>} */
  const tally = new Map();
  for (const run of runs) tally.set(RUN_WORDS[run][0], (tally.get(RUN_WORDS[run][0]) ?? 0) + 1);
  const parts = [...tally].map(([word, n]) => `${n} ${word}`).join(", ");
  const last = RUN_WORDS[runs[runs.length - 1]][0];
  return `Last ${runs.length === 1 ? "run" : `${runs.length} runs`}: ${parts}; the latest ${last}`;
}

/**
 * A probe's last runs, one bar each, oldest on the left and the latest on the right: green up,
 * amber degraded, red down, grey blocked or in maintenance. `slots` bars always take the same
 * width, so the rows of a table line up however many runs each probe has.
 * @param {{ runs: readonly (keyof typeof RUN_WORDS)[], slots: number }} props
 */
export function RunBars({ runs, slots }) {
  const shown = runs.slice(-slots);
  const offset = slots - shown.length;
  return view`
    <svg class="runs" viewBox=${`0 0 ${slots * 4} 16`} preserveAspectRatio="none" role="img"
      aria-label=${runsText(shown)} data-runs=${shown.join(" ")}>
        ${
    Array.from({ length: offset }, (_, i) =>
      view`<rect x=${i * 4 + 0.5} y="13" width="3" height="3" class="o-none" />`)
  }${
    shown.map((run, i) =>
      view`<rect x=${(offset + i) * 4 + 0.5} y="0" width="3" height="16"
        class=${`o-${RUN_WORDS[run][1]}`}><title>${RUN_WORDS[run][0]}</title></rect>`
    )
  }
      </svg>
  `;
}

/** The windows of a series, their length in seconds, smallest first. */
export const WINDOW_SECONDS = {
  "1h": 3600,
  "6h": 6 * 3600,
  "24h": 86_400,
  "7d": 7 * 86_400,
  "30d": 30 * 86_400,
  "90d": 90 * 86_400,
};

/**
 * The window a chart opens on: the smallest that holds a history starting at `historySince`
 * (1 hour, 6 hours, 24 hours), so that a new probe's first minutes fill the chart instead of a
 * sliver at the right edge; 24 hours for a history longer than that, or none.
 * @param {string | null | undefined} historySince
 * @returns {"1h" | "6h" | "24h"}
 */
export function fitWindow(historySince, now = Date.now()) {
  if (!historySince) return "1h";
  const age = (now - Date.parse(historySince)) / 1000;
  return age <= WINDOW_SECONDS["1h"] ? "1h" : age <= WINDOW_SECONDS["6h"] ? "6h" : "24h";
}

/**
 * A chart's window: `first` until the reader picks one; until then each answer's history moves it
 * to the window that fits (`fitWindow`), so a probe page opened on the hour goes on to 6 hours as
 * the probe ages, and a guess from a page of results is put right by the series' `history_since`.
 * @template {string} W
 * @param {W} first
 * @param {{ history_since: string | null, until: string } | undefined} answer
 * @returns {[W | "1h" | "6h" | "24h", (window: W) => void]}
 */
export function useFittedWindow(first, answer) {
  const [window, setWindow] = useState(/** @type {W | "1h" | "6h" | "24h"} */ (first));
  const [chosen, setChosen] = useState(false);
  useEffect(() => {
    if (chosen || !answer) return;
    const fit = fitWindow(answer.history_since, Date.parse(answer.until));
    if (fit !== window) setWindow(fit);
  }, [answer]);
  return [window, (/** @type {W} */ w) => {
    setChosen(true);
    setWindow(w);
  }];
}
