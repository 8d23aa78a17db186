import { router } from "../init.ts";

export const targetsRouter = router({});
