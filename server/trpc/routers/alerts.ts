import { router } from "../init.ts";

export const alertsRouter = router({});
