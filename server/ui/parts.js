// @ts-check
/** Small pieces every page uses: state badges, times, errors, confirmations. */
import { useEffect, useRef, useState } from "preact/hooks";
import { view } from "./view.js";
import { ago, urlParts, utc } from "./format.js";
import { detailSentence } from "./messages.js";
import { focusLost, useFocusWhenLost } from "./focus.js";
/** @import { ComponentChildren } from "preact" */
/** @import { ApiError } from "./api.js" */

/** A probe's state as a word, coloured by CSS (the word is what counts, not the colour). */
/** @param {{ state: string }} props */
export function StateBadge({ state }) {
  return view`<span class="state state-${state}">${state}</span>`;
}

/** Beside a probe's state while it is flapping (its notifications wait until it is stable). */
/** @param {{ flapping?: boolean }} props */
export function FlappingBadge({ flapping }) {
  return flapping
    ? view` <span class="state state-degraded" title="Changing state often: alerts wait until it is stable">flapping</span>`
    : "";
}

/** An outcome of a run (`up`, `degraded`, `down`, `blocked`). */
/** @param {{ outcome: string | null | undefined }} props */
export function OutcomeBadge({ outcome }) {
  if (!outcome) return view`<span class="muted">none yet</span>`;
  return view`<span class="state state-${outcome}">${outcome}</span>`;
}

/**
 * A URL that wraps at its `/`, `?` and `&` (a `<wbr>` after each) rather than mid-word.
 * @param {{ url: string }} props
 */
export function UrlText({ url }) {
  return urlParts(url).map((part) => (part === null ? view`<wbr />` : part));
}

/**
 * A time shown relative to now, with the exact UTC time on hover.
 * @param {{ iso: string | null | undefined }} props
 */
export function Ago({ iso }) {
  if (!iso) return view`<span class="muted">never</span>`;
  return view`<time datetime=${iso} title=${utc(iso)}>${ago(iso)}</time>`;
}

/**
 * A time in UTC.
 * @param {{ iso: string | null | undefined }} props
 */
export function At({ iso }) {
  if (!iso) return view`<span class="muted">—</span>`;
  return view`<time datetime=${iso}>${utc(iso)}</time>`;
}

/**
 * What a failed load or action says, from the API's error body.
 * @param {ApiError | null | undefined} error
 */
export function describe(error) {
  if (!error) return "";
  if (error.status === 0) return error.message;
  const details = (error.details ?? []).map(detailSentence).join("; ");
  const text = details ? `${error.message} (${details})` : error.message;
  return error.status ? `${text} [${error.status}]` : text;
}

/** @param {{ error: ApiError | null, children?: ComponentChildren }} props */
export function ErrorNote({ error, children }) {
  if (!error) return null;
  return view`<p class="error" role="alert">${children ?? ""}${describe(error)}</p>`;
}

/** @param {{ what?: string }} props */
export function Loading({ what = "Loading" }) {
  return view`<p class="muted" role="status">${what}…</p>`;
}

/**
 * A button that asks again before doing something that cannot be undone: the first press shows
 * the confirmation and moves focus to it; Cancel puts focus back.
 * @param {{
 *   label: string,
 *   confirmLabel: string,
 *   question: string,
 *   onConfirm: () => Promise<void>,
 *   disabled?: boolean,
 * }} props
 */
export function ConfirmButton({ label, confirmLabel, question, onConfirm, disabled }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirmRef = useRef(/** @type {HTMLButtonElement | null} */ (null));
  const openRef = useRef(/** @type {HTMLButtonElement | null} */ (null));
  const wasAsking = useRef(false);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
    // Back to the button once the question closes, unless what the action showed took focus.
    else if (wasAsking.current && focusLost()) openRef.current?.focus();
    wasAsking.current = asking;
  }, [asking]);
  if (!asking) {
    return view`
      <button type="button" class="danger" ref=${openRef} disabled=${disabled}
        onClick=${() => setAsking(true)}>${label}</button>
    `;
  }
  const confirm = async () => {
    setBusy(true);
    try {
      await onConfirm();
    } finally {
      setBusy(false);
      setAsking(false);
    }
  };
  return view`
    <span class="confirm" role="group" aria-label=${question}>
      <span>${question}</span>
      <button type="button" class="danger" ref=${confirmRef} disabled=${busy} onClick=${confirm}>
          ${confirmLabel}
        </button>
      <button type="button" onClick=${() => setAsking(false)}>Cancel</button>
    </span>
  `;
}

/**
 * A page's status line ("Badge 3 was deleted."): read out as it changes, and focused when the
 * control that caused it went away (see `useFocusWhenLost`). Kept in the page while empty, so
 * that screen readers announce its first message.
 * @param {{ message: string }} props
 */
export function StatusNote({ message }) {
  const ref = useFocusWhenLost(message);
  return view`<p role="status" tabindex="-1" ref=${ref} class=${
    message ? "notice" : "sr-only"
  }>${message}</p>`;
}
