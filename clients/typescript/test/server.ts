/**
 * Starts a real accordion-server for the tests: the console script from the repository's
 * virtualenv (`make install`), on a free port (`--listen 127.0.0.1:0`; the port is read from the
 * banner it prints), with the embedded memory store. ACCORDION_SERVER overrides the command.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** clients/typescript/dist/test/server.js -> the repository root. */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");

export interface RunningServer {
  baseUrl: string;
  stop(): Promise<void>;
}

function command(): string[] {
  if (process.env["ACCORDION_SERVER"]) return process.env["ACCORDION_SERVER"].split(" ");
  const script = resolve(ROOT, ".venv/bin/accordion-server");
  if (!existsSync(script)) throw new Error(`${script} is missing: run 'make install' in ${ROOT}`);
  return [script];
}

export async function startServer(timeoutMs = 20_000): Promise<RunningServer> {
  const [cmd, ...args] = command();
  const env = { ...process.env };
  delete env["REDIS_URL"];
  const proc: ChildProcess = spawn(cmd!, [...args, "--listen", "127.0.0.1:0", "--metrics-port", "0"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  proc.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const addr = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`accordion-server did not start:\n${out}${err}`)), timeoutMs);
    proc.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /^accordion-server listening on (\S+)/m.exec(out);
      if (m) {
        clearTimeout(timer);
        ok(m[1]!);
      }
    });
    proc.on("exit", (code) => {
      clearTimeout(timer);
      fail(new Error(`accordion-server exited with ${code}:\n${out}${err}`));
    });
  });
  return {
    baseUrl: `http://${addr}`,
    stop: () =>
      new Promise<void>((done) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return done();
        const kill = setTimeout(() => proc.kill("SIGKILL"), 5_000);
        proc.once("exit", () => {
          clearTimeout(kill);
          done();
        });
        proc.kill("SIGTERM");
      }),
  };
}
