/**
 * htm's own declaration, as its ES module build (the file the page loads) exports it. Its package
 * has no `"type": "module"`, so TypeScript reads `htm/dist/htm.d.ts` as CommonJS, where the
 * default export sits one level down (`htm.default.bind`); `view.js` takes its types from here
 * (`@ts-types`). Types only: never served.
 *
 * @module
 */
import type htmPackage from "htm";

declare const htm: typeof htmPackage.default;
export default htm;
