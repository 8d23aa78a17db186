import { router } from "../init.ts";

export const badgesRouter = router({});
