// @ts-check
/**
 * Keeping a keyboard user's place across an action. A button disabled while its action runs loses
 * focus to the page (the browser's focus fixup), so after "Save" or "Send test" the next Tab
 * started from the top. `useFocusBack()` gives `mark()`, called as an action starts: it notes the
 * focused control and returns `done()`, called as the action ends; once the page has drawn the
 * end, focus goes back to that control when it is still on the page, enabled, and nothing else
 * took focus meanwhile (a page the action opened focuses its own heading).
 */
import { useLayoutEffect, useRef, useState } from "preact/hooks";

/** Whether focus has fallen to the page: the focused control went away or was disabled. */
export const focusLost = () =>
  document.activeElement === null || document.activeElement === document.body;

/** @returns {() => () => void} */
export function useFocusBack() {
  const [back, setBack] = useState(/** @type {{ to: HTMLElement } | null} */ (null));
  useLayoutEffect(() => {
    if (!back) return;
    if (focusLost() && back.to.isConnected && !back.to.matches(":disabled")) back.to.focus();
  }, [back]);
  return () => {
    const to = document.activeElement;
    return () => {
      if (to instanceof HTMLElement && to !== document.body) setBack({ to });
    };
  };
}

/**
 * For an action whose control goes away with it (a deleted row's Delete, an incident's
 * Acknowledge): the returned ref's element (focusable, `tabindex="-1"`) takes focus when `shown`
 * changes to a new truthy value and focus has fallen to the page, so the next Tab goes on from
 * what the action left (its status line, the new state) and not from the top. Never on the
 * first draw: a page that opens focuses its own heading.
 * @param {unknown} shown
 */
export function useFocusWhenLost(shown) {
  const ref = useRef(/** @type {HTMLElement | null} */ (null));
  const before = useRef(shown);
  useLayoutEffect(() => {
    const changed = shown && shown !== before.current;
    before.current = shown;
    if (changed && focusLost()) ref.current?.focus();
  }, [shown]);
  return ref;
}
