// @ts-check
/** A line of news carried from one page to the next ("Project shop was deleted."). */
import { createContext } from "preact";
import { useContext } from "preact/hooks";

export const NoticeContext = createContext(/** @type {(text: string) => void} */ (() => {}));

/** Answers `notice(text)`, which shows `text` on the page shown next. */
export const useNotice = () => useContext(NoticeContext);
