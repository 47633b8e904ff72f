// The probe server with an access decision in front (src/operator/process/http.ts): the probes are
// never reviewed, everything else is reviewed for the path it is served under (query dropped) and
// refused with the decision's status and reason; a client gone while under review takes no /events
// slot. The decision here is the test's to give; test/kube/operator-http-auth.test.ts has the API
// server give it.
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startProbeServer, type ProbeServer } from "../../src/operator/process/http.js";
import type { AccessDecision } from "../../src/operator/process/access-review.js";
import { OPERATOR_METRICS } from "../../src/operator/process/metrics.js";
import { Metrics } from "../../src/metrics/index.js";
import { StatusPage } from "../../src/status-page/index.js";

interface Asked {
  readonly authorization: string | undefined;
  readonly method: string;
  readonly path: string;
  readonly answer: (d: AccessDecision) => void;
}

/** A probe server whose every review waits for the test to answer it. */
async function start(): Promise<{ server: ProbeServer; page: StatusPage; asked: Asked[]; base: string }> {
  const asked: Asked[] = [];
  const page = new StatusPage({ title: "t" });
  const server = await startProbeServer(
    { host: "127.0.0.1", port: 0 },
    {
      live: () => true,
      ready: () => true,
      metrics: new Metrics().recorder(OPERATOR_METRICS),
      page,
      access: {
        decide: (authorization, method, path) =>
          new Promise<AccessDecision>((answer) => asked.push({ authorization, method, path, answer })),
      },
    },
  );
  return { server, page, asked, base: `http://127.0.0.1:${String(server.address.port)}` };
}

const until = async (done: () => boolean): Promise<void> => {
  while (!done()) await new Promise((r) => setTimeout(r, 5));
};

describe("the operator's probe server under review", () => {
  let server: ProbeServer | undefined;
  afterEach(async () => {
    await server?.close();
  });

  it("answers the probes without asking", async () => {
    const s = await start();
    server = s.server;
    for (const path of ["/healthz", "/livez", "/readyz"]) expect((await fetch(s.base + path)).status, path).toBe(200);
    expect(s.asked).toEqual([]);
  });

  it("asks about the path it serves, with the request's header and method, and answers as decided", async () => {
    const s = await start();
    server = s.server;
    const refused = fetch(`${s.base}/status.json?x=/healthz`, { headers: { Authorization: "Bearer t" } });
    await until(() => s.asked.length === 1);
    expect(s.asked[0]).toMatchObject({ authorization: "Bearer t", method: "GET", path: "/status.json" });
    s.asked[0]?.answer({ allowed: false, status: 403, reason: 'Forbidden: user "u" may not get /status.json' });
    const res = await refused;
    expect([res.status, await res.text()]).toEqual([403, 'Forbidden: user "u" may not get /status.json\n']);
    expect(res.headers.get("www-authenticate")).toBeNull();
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");

    const anonymous = fetch(`${s.base}/metrics`);
    await until(() => s.asked.length === 2);
    s.asked[1]?.answer({ allowed: false, status: 401, reason: "Unauthorized" });
    const challenged = await anonymous;
    expect([challenged.status, challenged.headers.get("www-authenticate")]).toEqual([401, "Bearer"]);

    const allowed = fetch(`${s.base}/metrics`, { headers: { Authorization: "Bearer ok" } });
    await until(() => s.asked.length === 3);
    s.asked[2]?.answer({ allowed: true, user: "u" });
    const metrics = await allowed;
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain("oooi_informers_synced");
  });

  it("a client gone while under review takes no /events slot", async () => {
    const s = await start();
    server = s.server;
    const req = request(`${s.base}/events`, { headers: { Authorization: "Bearer ok" } });
    req.on("error", () => {});
    req.end();
    await until(() => s.asked.length === 1);
    const socket = req.socket;
    if (socket === null) throw new Error("no socket while under review");
    const closed = new Promise((r) => socket.once("close", r));
    req.destroy();
    await closed;
    // The server's side of the socket closes once it reads the FIN.
    await new Promise((r) => setTimeout(r, 100));
    s.asked[0]?.answer({ allowed: true, user: "u" });
    await new Promise((r) => setTimeout(r, 50));
    expect(s.page.events.clients).toBe(0);
  });
});
