import { router } from "../init.ts";

export const incidentsRouter = router({});
