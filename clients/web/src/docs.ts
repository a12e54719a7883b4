// /docs: Swagger UI (the swagger-ui-dist package, bundled) on docs/openapi.json, served by the
// page's static server at /docs/openapi.json. "Try it out" calls the live service on this same
// origin: the document's servers list is replaced by this page's origin, so it works on any port.
import SwaggerUIBundle from "swagger-ui-dist/swagger-ui-es-bundle.js";
import "swagger-ui-dist/swagger-ui.css";

async function main(): Promise<void> {
  const spec = (await (await fetch("/docs/openapi.json")).json()) as Record<string, unknown>;
  spec["servers"] = [{ url: window.location.origin, description: "this service" }];
  SwaggerUIBundle({ spec, dom_id: "#swagger-ui", deepLinking: true, tryItOutEnabled: true });
}

void main();
