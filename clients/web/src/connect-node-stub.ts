// In the browser bundle, @connectrpc/connect-node resolves here (vite.config.ts). The client's
// module (clients/typescript/src/client.ts) imports it for the Node factory,
// createAccordionClient(), which a page never calls: the page builds its client with
// createBrowserClient() (gRPC-Web). Bundling the real package would pull in node:http2 and zlib.
const inBrowser = (): never => {
  throw new Error("@connectrpc/connect-node is Node-only: use createBrowserClient() in a browser");
};

export const createGrpcTransport = inBrowser;

export class Http2SessionManager {
  constructor() {
    inBrowser();
  }

  abort(): void {}
}
