// Ready means serving, for CoreDNS (which speaks no xDS): the DNS ConfigMap's data → the SOA serial
// each zone of the unfiltered (pod-network) view must carry → real SOA queries through the DNS
// Service → "serving" once every answer carries the current serial. The renderer moves a zone's
// serial exactly when its content moves (src/dns/render/serial.ts) and CoreDNS's file plugin keeps
// the old data until it loads a file whose serial differs, so an equal serial is the current zone.
// Probes run on an injected clock, at most once per `intervalMs` per Service, only while not serving.
import { Resolver } from "node:dns/promises";
import { readPrevious } from "../../dns/render/serial.js";
import type { Clock, TimerHandle } from "../../util/clock.js";
import type { KubeObject } from "../../kube/rest.js";

/** One zone and the serial its current rendering carries. */
export interface ExpectedSoa {
  readonly zone: string;
  readonly serial: number;
}

/** Where a DNS Service answers. */
export interface DnsTarget {
  readonly host: string;
  readonly port: number;
}

/**
 * The zones a pod-network client (the operator) is answered from: the `file` of each Corefile
 * server block without a `view` (filtered views answer VLAN clients only), with the serial of its
 * zone file. Sorted by zone. Pure.
 */
export function expectedSoa(data: Readonly<Record<string, string>>): ExpectedSoa[] {
  const out: ExpectedSoa[] = [];
  for (const block of (data["Corefile"] ?? "").split(/\n\}\n?/)) {
    if (/^\s+view\s/m.test(block)) continue;
    const file = /^\s+file\s+(\S+)\s+(\S+)/m.exec(block);
    if (file === null) continue;
    const key = (file[1] ?? "").slice((file[1] ?? "").lastIndexOf("/") + 1);
    const serial = readPrevious(data[key] ?? "").serial;
    if (serial !== undefined) out.push({ zone: file[2] ?? "", serial });
  }
  return out.sort((a, b) => (a.zone < b.zone ? -1 : a.zone > b.zone ? 1 : 0));
}

/** Asks `target` for each zone's SOA; undefined when all carry the expected serial, else why not. */
export async function checkSoa(
  target: DnsTarget,
  expected: readonly ExpectedSoa[],
  timeoutMs: number,
): Promise<string | undefined> {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
  resolver.setServers([`${target.host}:${String(target.port)}`]);
  for (const e of expected) {
    try {
      const soa = await resolver.resolveSoa(e.zone);
      if (soa.serial !== e.serial)
        return `CoreDNS at ${target.host}:${String(target.port)} serves zone ${e.zone} at serial ${String(soa.serial)}, not the current ${String(e.serial)} yet`;
    } catch (err) {
      return `CoreDNS at ${target.host}:${String(target.port)} does not answer for zone ${e.zone}: ${(err as { code?: string }).code ?? (err as Error).message}`;
    }
  }
  return undefined;
}

/** Options of DnsServingProbe. */
export interface DnsServingProbeOptions {
  readonly clock: Clock;
  /** At most one probe per Service this often while it is not serving (default 3 s). */
  readonly intervalMs?: number;
  /** Per query (default 2 s). */
  readonly timeoutMs?: number;
  /** The query (default checkSoa); tests keep the default and point `target` at a real CoreDNS. */
  readonly check?: typeof checkSoa;
}

interface Probe {
  key: string;
  /** The expectation the last result is about. */
  asked: string;
  result: string | undefined;
  known: boolean;
  timer: TimerHandle | undefined;
  running: boolean;
}

/** Remembers the last probe per Service; status reads it, and a changed answer notifies. */
export class DnsServingProbe {
  readonly #o: DnsServingProbeOptions;
  readonly #probes = new Map<string, Probe & { target: DnsTarget; expected: readonly ExpectedSoa[] }>();
  readonly #listeners = new Set<() => void>();
  #stopped = false;
  #answers = 0;

  constructor(o: DnsServingProbeOptions) {
    this.#o = o;
  }

  /**
   * Why the Service `key` at `target` does not serve `expected` yet, from the last probe of this very
   * expectation; undefined when it does. A new expectation answers "not probed yet" and is probed
   * at once; a failing one again after the interval.
   */
  why(key: string, target: DnsTarget, expected: readonly ExpectedSoa[]): string | undefined {
    const asked = JSON.stringify([target, expected]);
    let p = this.#probes.get(key);
    if (p?.asked !== asked) {
      if (p?.timer !== undefined) this.#o.clock.clearTimeout(p.timer);
      p = { key, asked, result: undefined, known: false, timer: undefined, running: false, target, expected };
      this.#probes.set(key, p);
      this.#run(p);
    }
    return p.known ? p.result : `CoreDNS at ${target.host}:${String(target.port)} has not been asked yet`;
  }

  /** How many times a probe's answer changed: the same number, the same answers to the same questions. */
  get answers(): number {
    return this.#answers;
  }

  /** Calls `listener` when a probe's answer changed. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  stop(): void {
    this.#stopped = true;
    for (const p of this.#probes.values()) if (p.timer !== undefined) this.#o.clock.clearTimeout(p.timer);
  }

  #run(p: Probe & { target: DnsTarget; expected: readonly ExpectedSoa[] }): void {
    if (this.#stopped || p.running) return;
    p.running = true;
    p.timer = undefined;
    const check = this.#o.check ?? checkSoa;
    void check(p.target, p.expected, this.#o.timeoutMs ?? 2_000).then((result) => {
      p.running = false;
      if (this.#stopped || this.#probes.get(p.key) !== p) return;
      const changed = !p.known || p.result !== result;
      p.known = true;
      p.result = result;
      // Serving: nothing to watch until the expectation moves (the next rendering).
      if (result !== undefined)
        p.timer = this.#o.clock.setTimeout(() => {
          this.#run(p);
        }, this.#o.intervalMs ?? 3_000);
      if (!changed) return;
      this.#answers++;
      for (const l of this.#listeners) l();
    });
  }
}

/** What status asks about a DNSServer: why its live Service does not serve `data` yet; undefined when it does. */
export interface DnsServingView {
  why(service: KubeObject, data: Readonly<Record<string, string>>): string | undefined;
  /**
   * The same number while every answer to the same question is the same (the probes' answers have
   * not moved). Without it, a reconcile pass computes every object's status again.
   */
  epoch?(): number;
}

/** The Service's ClusterIP and its UDP "dns" port (port 53 when unnamed); undefined before it has a ClusterIP. */
export function serviceTarget(service: KubeObject): DnsTarget | undefined {
  const spec = (service["spec"] ?? {}) as { clusterIP?: string; ports?: { name?: string; port?: number }[] };
  if (spec.clusterIP === undefined || spec.clusterIP === "" || spec.clusterIP === "None") return undefined;
  const port = spec.ports?.find((p) => p.name === "dns")?.port ?? 53;
  return { host: spec.clusterIP, port };
}

/** DnsServingView over a probe; `target` maps a Service to where it answers (default serviceTarget). */
export function dnsServingView(
  probe: DnsServingProbe,
  target: (service: KubeObject) => DnsTarget | undefined = serviceTarget,
): DnsServingView {
  return {
    epoch: () => probe.answers,
    why: (service, data) => {
      const name = `${service.metadata?.namespace ?? ""}/${service.metadata?.name ?? ""}`;
      const at = target(service);
      if (at === undefined) return `Service ${name} has no ClusterIP yet`;
      const expected = expectedSoa(data);
      if (expected.length === 0) return undefined; // no pod-network zone: nothing a query could confirm
      return probe.why(name, at, expected);
    },
  };
}
