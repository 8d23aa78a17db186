import { router } from "../init.ts";

export const maintenanceRouter = router({});
