/**
 * The one script of a public status page, served from the page's own origin
 * (`/status/{project}/live.js`, allowed by the page's CSP as `'self'`): every minute, while the
 * tab is visible, it fetches the page again and swaps each part marked `data-live` whose markup
 * changed, so new figures appear without a reload and nothing above the reader moves (the
 * cards keep their sizes). With JavaScript off the page is the same, only static.
 *
 * @module
 */

/** How often the page's figures are fetched again (the server keeps a page 15 s). */
export const LIVE_REFRESH_SECONDS = 60;

export const LIVE_SCRIPT = `"use strict";
(() => {
  const refresh = async () => {
    if (document.hidden) return;
    try {
      const answer = await fetch(location.href, { cache: "no-cache" });
      if (!answer.ok) return;
      const next = new DOMParser().parseFromString(await answer.text(), "text/html");
      for (const part of document.querySelectorAll("[data-live]")) {
        const fresh = next.querySelector('[data-live="' + part.dataset.live + '"]');
        if (fresh && fresh.outerHTML !== part.outerHTML) {
          part.replaceWith(document.importNode(fresh, true));
        }
      }
    } catch {
      // Offline or the service is restarting: the figures shown stay until the next try.
    }
  };
  setInterval(refresh, ${LIVE_REFRESH_SECONDS * 1000});
  document.addEventListener("visibilitychange", refresh);
})();
`;
