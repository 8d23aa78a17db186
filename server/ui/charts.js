// @ts-check
/**
 * The probe page's charts: latency per bucket (p50, p95, max) drawn by uPlot on a canvas, the
 * outcome of each bucket as a strip of bars, and the overview's 24-hour sparkline. The strip
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
 * Axis labels: `250 ms`, `1.5 s`.
 * @param {number} v
 */
const axisMillis = (v) => (v >= 1000 ? `${+(v / 1000).toFixed(2)} s` : `${v} ms`);

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
    const axis = {
      stroke: colors.text,
      grid: { stroke: colors.grid },
      ticks: { stroke: colors.grid },
    };
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
        // Buckets are UTC (days for 30 and 90 days): the axis shows UTC too.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
        scales: {
          x: { time: true },
          y: { range: (_u, _min, max) => [0, Math.max(max ?? 0, 1) * 1.1] },
        },
        axes: [axis, { ...axis, size: 60, values: (_u, values) => values.map(axisMillis) }],
        series: [
          {
            label: "Time (UTC)",
            value: (
              _u,
              v,
            ) => (v == null ? "—" : utc(new Date(v * 1000).toISOString(), { seconds: false })),
          },
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
 * The worst outcome a bucket holds: what its bar shows.
 * @param {Bucket} bucket
 * @returns {"down" | "degraded" | "up" | "maintenance" | "none"}
 */
export function bucketOutcome(bucket) {
  if (bucket.down > 0 || bucket.blocked > 0) return "down";
  if (bucket.degraded > 0) return "degraded";
  if (bucket.up > 0) return "up";
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
  const tally = { up: 0, degraded: 0, down: 0, maintenance: 0, none: 0 };
  for (const b of series.buckets) tally[bucketOutcome(b)]++;
  const label = `Outcome per bucket: ${tally.up} all up, ${tally.degraded} degraded, ` +
    `${tally.down} with failures, ${tally.maintenance} in maintenance, ${tally.none} without runs`;
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
 * The last 24 hours of a probe, hour by hour: bar height and colour follow uptime.
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
    <svg class="spark" viewBox=${`0 0 ${width} 20`} width=${width} height="20" role="img"
      aria-label=${label}>
        ${
    values.map((v, i) => {
      const height = v === null ? 2 : Math.max(3, Math.round(v * 20));
      const tone = v === null ? "none" : v >= 1 ? "up" : v >= 0.9 ? "degraded" : "down";
      return view`<rect x=${i * 3} y=${
        20 - height
      } width="2" height=${height} class=${`o-${tone}`} />`;
    })
  }
      </svg>
  `;
}
