// A loopback TCP relay in front of a real server, which a test can cut (every open connection
// reset, new ones refused) and restore: a network partition between a client and a real API
// server, without standing in for the server. TLS passes through untouched.
import { connect, createServer, type Server, type Socket } from "node:net";

export class TcpRelay {
  readonly #server: Server;
  readonly #open = new Set<Socket>();
  #cut = false;
  port = 0;

  private constructor(target: { host: string; port: number }) {
    this.#server = createServer((client) => {
      if (this.#cut) {
        client.resetAndDestroy();
        return;
      }
      const upstream = connect(target.port, target.host);
      for (const [a, b] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        this.#open.add(a);
        a.on("error", () => {
          b.destroy();
        });
        a.on("close", () => {
          this.#open.delete(a);
          b.destroy();
        });
        a.pipe(b);
      }
    });
  }

  /** A relay on `listen` (default 127.0.0.1; any 127.x works on Linux), free port, to `target`. */
  static async start(target: { host: string; port: number }, listen = "127.0.0.1"): Promise<TcpRelay> {
    const relay = new TcpRelay(target);
    await new Promise<void>((resolve) => relay.#server.listen(0, listen, resolve));
    const address = relay.#server.address();
    relay.port = typeof address === "object" && address !== null ? address.port : 0;
    return relay;
  }

  /** Resets every open connection and refuses new ones until restore(). */
  cut(): void {
    this.#cut = true;
    for (const s of this.#open) s.resetAndDestroy();
  }

  restore(): void {
    this.#cut = false;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) =>
      this.#server.close(() => {
        resolve();
      }),
    );
  }
}
