/**
 * The TypeScript example of docs/clients.md (section "TypeScript client", once the README's) runs
 * as written: saved inside this package (so `import "@accordion/client"` resolves to it) and
 * pointed at a server the test starts, it prints what its comments say.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { after, before, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startServer, type RunningServer } from "./server.js";

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const PAGE = readFileSync(resolve(PACKAGE, "../../docs/clients.md"), "utf8");

let server: RunningServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

it("the example of docs/clients.md plays against a real server", async () => {
  const section = PAGE.split("\n## TypeScript client\n")[1]?.split("\n## ")[0] ?? "";
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(code, "a ```js block in the TypeScript client section of docs/clients.md");
  assert.ok(code.includes('"http://127.0.0.1:50051"'));
  const file = resolve(PACKAGE, "dist", "readme-example.mjs");
  writeFileSync(file, code.replace("http://127.0.0.1:50051", server.baseUrl));
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 30_000 });
    assert.deepEqual(stdout.split("\n"), [
      "10D>4D -> 2",
      "9H>6H -> 3",
      "10S>2S -> 4",
      "50",
      "FAILED_PRECONDITION ILLEGAL_MOVE 21",
      "",
    ]);
  } finally {
    rmSync(file, { force: true });
  }
});
