// Issue 25 row 19 (serve) through the built CLI: the HTTP port (status page, /status.json,
// /metrics, probes) answers only Hosts a browser could not have been tricked into naming — IP
// literals, localhost, --http-allow-host names — and `--http-listen :PORT` binds loopback. A DNS
// rebinding page names the attacker's domain in Host and gets 403 naming the flag.
import { request } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, ServeProcess, until } from "../support/cli.js";

const example = join(ROOT, "examples", "minimal");

/** GET path on 127.0.0.1:port with this Host header, as a real client sends it. */
function get(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { host } }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (d: string) => {
        body += d;
      });
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

async function served(extra: readonly string[]): Promise<{ serve: ServeProcess; port: number; url: string }> {
  const serve = new ServeProcess(["--manifests", example, "--no-dns", "--no-xds", ...extra]);
  await until(() => /status page on http:\/\/[^ ]+:\d+\//.test(serve.log), "the status page listening");
  const m = /status page on (http:\/\/([^ ]+):(\d+)\/)/.exec(serve.log);
  return { serve, port: Number(m?.[3]), url: m?.[1] ?? "" };
}

describe("oooi serve --http-listen against DNS rebinding", () => {
  it("refuses a foreign Host with 403 naming --http-allow-host; IP literals and localhost are answered", async () => {
    const { serve, port } = await served(["--http-listen", "127.0.0.1:0"]);
    try {
      for (const path of ["/status.json", "/", "/metrics", "/events"]) {
        const r = await get(port, path, `rebind.attacker.example:${String(port)}`);
        expect(r.status, path).toBe(403);
        expect(r.body).toContain("--http-allow-host rebind.attacker.example");
        expect(r.body).not.toMatch(/tenant-vlan100/);
      }
      for (const host of [`127.0.0.1:${String(port)}`, `localhost:${String(port)}`, "[::1]", "LOCALHOST."]) {
        const r = await get(port, "/status.json", host);
        expect(r.status, host).toBe(200);
      }
    } finally {
      await serve.stop();
    }
  });

  it("answers a name given with --http-allow-host", async () => {
    const { serve, port } = await served([
      "--http-listen",
      "127.0.0.1:0",
      "--http-allow-host",
      "status.lab.example",
      "--http-allow-host",
      "other.example",
    ]);
    try {
      expect((await get(port, "/status.json", `status.lab.example:${String(port)}`)).status).toBe(200);
      expect((await get(port, "/healthz", "other.example")).status).toBe(200);
      expect((await get(port, "/status.json", "third.example")).status).toBe(403);
    } finally {
      await serve.stop();
    }
  });

  it("binds loopback for --http-listen :PORT", async () => {
    const { serve, url, port } = await served(["--http-listen", ":0"]);
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      expect((await get(port, "/healthz", `127.0.0.1:${String(port)}`)).status).toBe(200);
    } finally {
      await serve.stop();
    }
  });
});
