import { router } from "../init.ts";

export const statusPagesRouter = router({});
