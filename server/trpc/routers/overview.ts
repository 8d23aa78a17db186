import { router } from "../init.ts";

export const overviewRouter = router({});
