// @ts-check
/** Loading what a page shows, with reloads that keep the last answer on screen meanwhile. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
/** @import { ApiError } from "./api.js" */

/**
 * What a page shows of a load: the last answer (kept while a reload runs), the error of the last
 * attempt (an ApiError, as the API's calls throw), whether one runs, and `reload()`.
 * @template T
 * @typedef {{ data: T | undefined, error: ApiError | null, loading: boolean }} LoadState
 */

/**
 * Runs `load()` when `deps` change (dropping what was shown), and on `reload()` or a new
 * `refresh` value (keeping it until the new answer comes). Answers
 * `{ data, error, loading, reload }`.
 */
/**
 * @template T
 * @param {() => Promise<T>} load
 * @param {unknown[]} deps
 * @returns {LoadState<T> & { reload: () => void }}
 */
export function useLoad(load, deps, refresh = 0) {
  const [state, setState] = useState(
    /** @type {LoadState<T>} */ ({ data: undefined, error: null, loading: true }),
  );
  const [round, setRound] = useState(0);
  const key = JSON.stringify(deps);
  const shownKey = useRef(key);
  useEffect(() => {
    let current = true;
    const keep = shownKey.current === key;
    shownKey.current = key;
    setState((s) => ({ data: keep ? s.data : undefined, error: null, loading: true }));
    load().then(
      (data) => current && setState({ data, error: null, loading: false }),
      (/** @type {ApiError} */ error) =>
        current && setState((s) => ({ data: keep ? s.data : undefined, error, loading: false })),
    );
    return () => {
      current = false;
    };
  }, [key, round, refresh]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { ...state, reload };
}

/**
 * Calls `tick` every `ms` while the tab is visible (and once when it becomes visible again).
 * @param {number} ms
 * @param {() => void} tick
 */
export function useEvery(ms, tick) {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") latest.current();
    }, ms);
    const shown = () => document.visibilityState === "visible" && latest.current();
    document.addEventListener("visibilitychange", shown);
    return () => {
      clearInterval(timer);
      document.removeEventListener("visibilitychange", shown);
    };
  }, [ms]);
}

/**
 * Sets the document's title for the page shown.
 * @param {string} title
 */
export function useTitle(title) {
  useEffect(() => {
    document.title = title ? `${title} · Probe monitor` : "Probe monitor";
  }, [title]);
}
