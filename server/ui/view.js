// @ts-check
/**
 * `view`: Preact's `h` through htm, so components are written as tagged templates in plain ES
 * modules (no JSX, no build step).
 */
import { h } from "preact";
// @ts-types="./htm.d.ts"
import htm from "htm";

export const view = htm.bind(h);
