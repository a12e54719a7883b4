// The page (index.html) and the API docs (docs/index.html), bundled from npm packages at build
// time: nothing is fetched from a CDN, so the built dist/ works offline. The TypeScript client is
// compiled from its sources (clients/typescript/src/browser.ts, the gRPC-Web entry) with the
// packages of clients/typescript/node_modules, as its own build would.
import { resolve } from "node:path";
import { defineConfig } from "vite";

export default defineConfig({
  base: "/",
  resolve: {
    alias: {
      "@accordion/client/browser": resolve(__dirname, "../typescript/src/browser.ts"),
      // client.ts also holds the Node factory; its Node-only transport is never used here.
      "@connectrpc/connect-node": resolve(__dirname, "src/connect-node-stub.ts"),
    },
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // Swagger UI alone is ~1.4 MB minified; it loads only on /docs.
    chunkSizeWarningLimit: 2000,
    rollupOptions: {
      input: { main: resolve(__dirname, "index.html"), docs: resolve(__dirname, "docs/index.html") },
    },
  },
});
