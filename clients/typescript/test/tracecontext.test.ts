/**
 * W3C trace context: every call of a client carries a `traceparent` (a new trace's, the client's
 * option, or the call's own), as the server receives it: the header is read back by an
 * interceptor that runs after the client's, on calls to a real server (see server.ts).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createContextValues, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  TRACEPARENT,
  bearerTokenInterceptor,
  newTraceparent,
  parseTraceparent,
  traceContextInterceptor,
  type TraceparentSource,
} from "../src/index.js";
import { createAccordionClientFromTransport } from "../src/client.js";
import { startServer, type RunningServer } from "./server.js";

let server: RunningServer;

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.stop();
});

/** A client whose sent `traceparent` headers land in `sent` (in call order). */
function recording(source?: TraceparentSource) {
  const sent: string[] = [];
  const recorder: Interceptor = (next) => async (req) => {
    sent.push(req.header.get("traceparent") ?? "");
    return next(req);
  };
  const transport = createGrpcTransport({
    baseUrl: server.baseUrl,
    interceptors: [bearerTokenInterceptor(), traceContextInterceptor(source), recorder],
  });
  return { client: createAccordionClientFromTransport(transport), sent };
}

describe("trace context", () => {
  it("makes and reads traceparents", () => {
    const made = newTraceparent();
    const parsed = parseTraceparent(made);
    assert.ok(parsed);
    assert.equal(parsed.flags, 1);
    assert.notEqual(parseTraceparent(newTraceparent())?.traceId, parsed.traceId);
    assert.equal(parseTraceparent("00-" + "0".repeat(32) + "-" + "1".repeat(16) + "-01"), undefined);
    assert.equal(parseTraceparent("not one"), undefined);
    assert.throws(() => traceContextInterceptor("nonsense"), TypeError);
  });

  it("sends a new trace per call by default", async () => {
    const { client, sent } = recording();
    await client.listVariants("accordion");
    await client.listVariants("accordion");
    assert.equal(sent.length, 2);
    const [first, second] = sent.map((header) => parseTraceparent(header));
    assert.ok(first && second);
    assert.notEqual(first.traceId, second.traceId);
  });

  it("sends the caller's traceparent: the client's option, or one call's own", async () => {
    const caller = newTraceparent();
    const { client, sent } = recording(() => caller);
    const { game } = await client.newGame({ variant: "accordion", start: { case: "seed", value: 7n } });
    assert.ok(game);
    await client.getGame(game.id);
    const own = newTraceparent();
    const contextValues = createContextValues().set(TRACEPARENT, own);
    await client.raw.listVariants({ variant: "accordion" }, { contextValues });
    assert.deepEqual(sent, [caller, caller, own]);
  });
});
