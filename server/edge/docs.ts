/**
 * What is served without the API key besides health checks: the OpenAPI document and `/docs`, an
 * interactive reference (Swagger UI, served from the swagger-ui-dist package's files: no CDN).
 */
import swaggerUiDir from "swagger-ui-dist/absolute-path.js";
import { isRead } from "./methods.ts";

export const DOCS_PATH = "/docs";

/** Files of swagger-ui-dist served under /docs, with their content types. */
const ASSETS: Record<string, string> = {
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui.css": "text/css; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

// Swagger UI styles elements inline and draws icons from data: URLs; everything else is ours.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
].join("; ");

function page(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Probe service API reference</title>
<link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
<link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
<script src="${DOCS_PATH}/init.js"></script>
</body>
</html>
`;
}

function init(openApiPath: string): string {
  return `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(openApiPath)},
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  tryItOutEnabled: true,
  displayRequestDuration: true,
  persistAuthorization: false,
  validatorUrl: null,
});
`;
}

/** The asset files, read from the package once, on first use. */
let assets: Promise<Map<string, Uint8Array>> | undefined;

function loadAssets(): Promise<Map<string, Uint8Array>> {
  assets ??= (async () => {
    const dir = swaggerUiDir();
    const entries = await Promise.all(
      Object.keys(ASSETS).map(async (name) =>
        [name, await Deno.readFile(`${dir}/${name}`)] as const
      ),
    );
    return new Map(entries);
  })();
  assets.catch(() => (assets = undefined));
  return assets;
}

function respond(body: BodyInit, type: string, extra: Record<string, string> = {}): Response {
  return new Response(body, { headers: { "content-type": type, ...extra } });
}

/**
 * Answers the requests for the OpenAPI document (at `openApiPath`) and the reference page, and
 * null for any other request.
 */
export function createDocsHandler(
  { openApiJson, openApiPath }: { openApiJson: Uint8Array; openApiPath: string },
): (request: Request, path: string) => Promise<Response | null> {
  const html = page();
  const script = init(openApiPath);
  return async (request, path) => {
    if (!isRead(request.method)) return null;
    if (path === openApiPath) return respond(openApiJson.slice(), "application/json");
    if (path === DOCS_PATH) {
      return respond(html, "text/html; charset=utf-8", { "content-security-policy": CSP });
    }
    if (!path.startsWith(`${DOCS_PATH}/`)) return null;
    const name = path.slice(DOCS_PATH.length + 1);
    if (name === "init.js") return respond(script, "text/javascript; charset=utf-8");
    const type = ASSETS[name];
    if (!type) return null;
    const file = (await loadAssets()).get(name)!;
    return respond(file.slice(), type);
  };
}
