/**
 * Test support for callers from outside the process (the typed client, the CLI, Node, a
 * browser): the real handler behind the real connection layer (`server/edge/serve.ts`, default
 * limits) on 127.0.0.1, on a port of its own.
 */
import type { App } from "../app.ts";
import { serve } from "../edge/serve.ts";
import { type Backend, startTestApp, TEST_API_KEY } from "./app.ts";

export interface LiveServer {
  /** The server's root URL, for example `http://127.0.0.1:41234`. */
  url: string;
  apiKey: string;
  app: App;
  close(): Promise<void>;
}

/** Serves a test app over a fresh database of the given kind on 127.0.0.1, port chosen by the OS. */
export async function startLiveServer(backend: Backend = "pglite"): Promise<LiveServer> {
  const app = await startTestApp(backend);
  const server = await serve({ hostname: "127.0.0.1", port: 0, handler: app.handler });
  const { port } = server.addr;
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey: TEST_API_KEY,
    app,
    close: async () => {
      await server.shutdown();
      await app.close();
    },
  };
}
