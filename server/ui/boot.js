// @ts-check
/**
 * The page's entry: starts the overview's one API call at once, while the rest of the dashboard
 * (`app.js` and what it imports, preloaded by the page) is still arriving.
 */
import { prefetch, storedKey } from "./api.js";

if (storedKey() !== null && /^(#\/?)?$/.test(location.hash)) prefetch("/overview");
import("./app.js");
