// KubeRest.watch runs on client-node's Watch; these rows hold the adapters around it (rest.ts
// watchThrough) to what a reflector needs: each outcome of a watch is told apart. Without the adapters,
// client-node 1.4 swallows a handler's exception (the stream goes on without the event), reports a
// refused watch by its status text alone, and reports our own abort as an AbortError.
import { createServer, type AddressInfo, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { KubeApiError, KubeRest, statusCode, type WatchEvent } from "../../src/kube/rest.js";
import { eventually, FakeApiServer, kubeConfigFor } from "../support/fake-apiserver/index.js";
import type { JsonObject } from "../support/fake-apiserver/types.js";

let fake: FakeApiServer | undefined;
afterEach(async () => {
  await fake?.stop();
  fake = undefined;
});

const PATH = "/api/v1/namespaces/default/configmaps";

function configMap(name: string): JsonObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: { a: name } };
}

async function started(): Promise<{ f: FakeApiServer; rest: KubeRest; codes: number[] }> {
  const f = await FakeApiServer.start();
  fake = f;
  const codes: number[] = [];
  const rest = new KubeRest(kubeConfigFor(f.url), {
    onResponse: (method, _path, code) => {
      if (method === "WATCH") codes.push(code);
    },
  });
  return { f, rest, codes };
}

/** The watch's outcome: "resolved", or the error it rejected with. */
function outcome(p: Promise<void>): Promise<"resolved" | Error> {
  return p.then(
    () => "resolved" as const,
    (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
  );
}

describe("KubeRest.watch on client-node's Watch", () => {
  it("delivers each event, and resolves when the server ends the stream cleanly", async () => {
    const { f, rest, codes } = await started();
    const seen: WatchEvent[] = [];
    const done = outcome(rest.watch(PATH, {}, (e) => seen.push(e), new AbortController().signal));
    await eventually(() => {
      expect(f.openWatches()).toBe(1);
    });
    f.seed(configMap("one"));
    await eventually(() => {
      expect(seen.map((e) => [e.type, e.object.metadata?.name])).toEqual([["ADDED", "one"]]);
    });
    f.resetWatches();
    expect(await done).toBe("resolved");
    expect(codes).toEqual([200]);
  });

  it("rejects when the connection is cut mid-stream (not a clean end)", async () => {
    const { f, rest, codes } = await started();
    const done = outcome(rest.watch(PATH, {}, () => {}, new AbortController().signal));
    await eventually(() => {
      expect(f.openWatches()).toBe(1);
    });
    f.resetWatches({ abrupt: true });
    const r = await done;
    expect(r).toBeInstanceOf(Error);
    expect(statusCode(r)).toBeUndefined();
    expect(codes).toEqual([200, 0]);
  });

  it("an exception thrown by the handler ends the watch and rejects with it; later events are not delivered", async () => {
    const { f, rest } = await started();
    const seen: string[] = [];
    const done = outcome(
      rest.watch(
        PATH,
        {},
        (e) => {
          seen.push(e.object.metadata?.name ?? "");
          throw new Error(`cannot apply ${e.object.metadata?.name ?? ""}`);
        },
        new AbortController().signal,
      ),
    );
    await eventually(() => {
      expect(f.openWatches()).toBe(1);
    });
    f.seed(configMap("bad"));
    const r = await done;
    expect(r).toBeInstanceOf(Error);
    expect((r as Error).message).toBe("cannot apply bad");
    await eventually(() => {
      expect(f.openWatches()).toBe(0);
    });
    f.seed(configMap("later"));
    expect(seen).toEqual(["bad"]);
  });

  it("a refused watch rejects with a KubeApiError carrying the code and naming the path (410 tells a reflector to re-list)", async () => {
    const { f, rest, codes } = await started();
    f.expireNextWatch({ as: "http" });
    const expired = await outcome(rest.watch(PATH, { resourceVersion: "1" }, () => {}, new AbortController().signal));
    expect(expired).toBeInstanceOf(KubeApiError);
    expect(statusCode(expired)).toBe(410);
    expect((expired as Error).message).toContain(`watch ${PATH}: 410`);

    f.failNext(1, { match: { verb: "watch" }, code: 503 });
    const unavailable = await outcome(rest.watch(PATH, {}, () => {}, new AbortController().signal));
    expect(statusCode(unavailable)).toBe(503);
    expect(codes).toEqual([410, 503]);
  });

  it("aborting ends a watch whose server never answers (client-node has no controller to hand out yet)", async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((s) => {
      sockets.add(s);
      s.on("error", () => {});
    });
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${String((silent.address() as AddressInfo).port)}`;
      const rest = new KubeRest(kubeConfigFor(url));
      const stop = new AbortController();
      const done = outcome(rest.watch(PATH, {}, () => {}, stop.signal));
      await eventually(() => {
        expect(sockets.size).toBe(1);
      });
      stop.abort();
      expect(await done).toBe("resolved");
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it("aborting the signal ends the stream and resolves, before and after it opened", async () => {
    const { f, rest } = await started();
    const stop = new AbortController();
    const done = outcome(rest.watch(PATH, {}, () => {}, stop.signal));
    await eventually(() => {
      expect(f.openWatches()).toBe(1);
    });
    stop.abort();
    expect(await done).toBe("resolved");
    await eventually(() => {
      expect(f.openWatches()).toBe(0);
    });
    expect(await outcome(rest.watch(PATH, {}, () => {}, stop.signal))).toBe("resolved");
  });
});
