/**
 * Targets as users write them (host:port, URLs, dns:///), clear errors for anything else, and the
 * random request id every NewGame, ApplyMove and Undo carries: against a real server.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { Interceptor } from "@connectrpc/connect";
import {
  AccordionClient,
  bearerTokenInterceptor,
  createAccordionClient,
  newRequestId,
  toBaseUrl,
} from "../src/index.js";
import { startServer, type RunningServer } from "./server.js";

let server: RunningServer;
let addr: string;

before(async () => {
  server = await startServer();
  addr = server.baseUrl.replace("http://", "");
});

after(async () => {
  await server?.stop();
});

describe("targets", () => {
  it("reads host:port, URLs and dns:/// as a base URL", () => {
    assert.equal(toBaseUrl("127.0.0.1:50051"), "http://127.0.0.1:50051");
    assert.equal(toBaseUrl(" localhost:50051 "), "http://localhost:50051");
    assert.equal(toBaseUrl("games.example.com:443", true), "https://games.example.com:443");
    assert.equal(toBaseUrl("[::1]:50051"), "http://[::1]:50051");
    assert.equal(toBaseUrl("http://127.0.0.1:50051"), "http://127.0.0.1:50051");
    assert.equal(toBaseUrl("http://127.0.0.1:50051/"), "http://127.0.0.1:50051");
    assert.equal(toBaseUrl("https://games.example.com"), "https://games.example.com");
    assert.equal(toBaseUrl("HTTPS://games.example.com:8443"), "https://games.example.com:8443");
    assert.equal(toBaseUrl("dns:///games.example.com:50051"), "http://games.example.com:50051");
    assert.equal(toBaseUrl("dns:games.example.com:443", true), "https://games.example.com:443");
  });

  it("refuses anything else with a message that says what a target looks like", () => {
    const cases: [string, string][] = [
      ["", "the target is empty"],
      ["127.0.0.1", "the port is missing"],
      ["localhost:http", "the port must be a number"],
      ["localhost:70000", "the port must be a number in 1..65535"],
      ["not a host:50051", "is not a host name"],
      ["::1:50051", "is not a host name"],
      ["ftp://games.example.com", "use http:// or https://"],
      ["http://games.example.com/v1/games", "a target has no path"],
      ["http://user@games.example.com", "a target has no path, query or user"],
      ["http://:50051", "does not read as a URL"],
      ["dns:///games.example.com", "the port is missing"],
    ];
    for (const [target, says] of cases) {
      assert.throws(
        () => createAccordionClient(target),
        (err: unknown) =>
          err instanceof TypeError &&
          err.message.startsWith(`not a valid target ${JSON.stringify(target)}: `) &&
          err.message.includes(says) &&
          err.message.includes("host:port (127.0.0.1:50051)"),
        target,
      );
    }
    assert.throws(() => toBaseUrl("http://127.0.0.1:50051", true), /use https:\/\//);
  });

  for (const form of ["host:port", "http://host:port", "dns:///host:port"]) {
    it(`plays against a real server given ${form}`, async () => {
      const target = form.replace("host:port", addr);
      const client = createAccordionClient(target);
      try {
        const { game } = await client.newGame({ variant: "accordion", start: { case: "seed", value: 7n } });
        const reply = await client.play(game!.id, "10D>4D");
        assert.equal(reply.move?.notation, "10D>4D");
        assert.equal(reply.game?.version, 2n);
      } finally {
        client.close();
      }
    });
  }
});

describe("request ids", () => {
  it("are 128 random bits, a fresh one per NewGame, ApplyMove and Undo unless given", async () => {
    const sent: [string, string][] = [];
    const record: Interceptor = (next) => async (req) => {
      const message = req.message as { requestId?: string };
      if (message.requestId !== undefined) sent.push([req.method.name, message.requestId]);
      return next(req);
    };
    const transport = createGrpcTransport({
      baseUrl: server.baseUrl,
      interceptors: [bearerTokenInterceptor(), record],
    });
    const client = new AccordionClient(transport, 10_000);
    const { game } = await client.newGame({ variant: "accordion", start: { case: "seed", value: 7n } });
    await client.play(game!.id, "10D>4D");
    await client.undo(game!.id);
    await client.play(game!.id, "10D>4D", { requestId: "mine-1" });
    await client.newGame({ variant: "accordion", requestId: "mine-2" });
    assert.deepEqual(
      sent.map(([method]) => method),
      ["NewGame", "ApplyMove", "Undo", "ApplyMove", "NewGame"],
    );
    const ids = sent.map(([, id]) => id);
    assert.deepEqual(ids.slice(3), ["mine-1", "mine-2"]);
    for (const id of ids.slice(0, 3)) assert.match(id, /^[0-9a-f]{32}$/);
    assert.equal(new Set(ids).size, 5);

    const many = Array.from({ length: 2000 }, () => newRequestId());
    assert.equal(new Set(many).size, many.length);
    for (let bit = 0; bit < 128; bit++) {
      const ones = many.filter((id) => (BigInt(`0x${id}`) >> BigInt(bit)) & 1n).length;
      assert.ok(ones > 700 && ones < 1300, `bit ${bit} set in ${ones} of 2000 ids`);
    }
  });
});
