// @ts-check
/**
 * The page's entry: starts the overview's one API call at once, while the rest of the dashboard
 * (`app.js` and what it imports, preloaded by the page) is still arriving.
 */
import { prefetch } from "./api.js";

// Signed in or not (the session's cookie is not for scripts to read): refused, it is dropped.
if (/^(#\/?)?$/.test(location.hash)) prefetch("/overview");
import("./app.js");
