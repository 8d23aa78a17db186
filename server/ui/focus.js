// @ts-check
/**
 * Keeping a keyboard user's place across an action. A button disabled while its action runs loses
 * focus to the page (the browser's focus fixup), so after "Save" or "Send test" the next Tab
 * started from the top. `useFocusBack()` gives `mark()`, called as an action starts: it notes the
 * focused control and returns `done()`, called as the action ends; once the page has drawn the
 * end, focus goes back to that control when it is still on the page, enabled, and nothing else
 * took focus meanwhile (a page the action opened focuses its own heading).
 */
import { useLayoutEffect, useState } from "preact/hooks";

/** @returns {() => () => void} */
export function useFocusBack() {
  const [back, setBack] = useState(/** @type {{ to: HTMLElement } | null} */ (null));
  useLayoutEffect(() => {
    if (!back) return;
    const lost = document.activeElement === null || document.activeElement === document.body;
    if (lost && back.to.isConnected && !back.to.matches(":disabled")) back.to.focus();
  }, [back]);
  return () => {
    const to = document.activeElement;
    return () => {
      if (to instanceof HTMLElement && to !== document.body) setBack({ to });
    };
  };
}
