// DHCP benchmark (issue 5). Needs root, kea-dhcp4 and perfdhcp (Debian kea-admin).
//   (a) VMI appears in the ClusterState → Kea has its reservation (config-set answered), through
//       the real model build, renderKea and KeaApplier (status-get, config-test, config-set), with
//       10, 1,000 and 5,000 reservations already present: p50/p99 over repeated runs.
//   (b) perfdhcp DORA/s against Kea running our generated config vs. a minimal hand-written
//       config of the same subnet, in the same run: ratio = ours / minimal (should be ≥ 0.9).
//       The clients are the 1,000 VMs' MACs (ours denies unknown MACs); the minimal config
//       leases them pool addresses, so a second baseline adds the same reservations bare.
//   (c) Allocation (issue 10): 5,000 VMIs in a /16 through the pure allocator, from an empty table
//       and with 5,000 already allocated plus one new; baseline in the same run: the scan the old
//       model did per build (every address of the CIDR into a free list). Needs nothing external.
// Prints one JSON object per line.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { KeaSync, selectDhcpModel } from "../../src/dhcp/kea/index.js";
import { build } from "../../src/model/build.js";
import { buildAllocations, type AllocationInput, type LiveInterface } from "../../src/model/allocations.js";
import { isHostAddress, parseCidr } from "../../src/model/ipv4.js";
import { Problems } from "../../src/model/problems.js";
import type { VirtualMachineInstance } from "../../src/api/external.js";
import type { ClusterState, DhcpModel } from "../../src/model/types.js";
import { combine, infra, NS, vmi } from "../../test/support/fixtures.js";
import { keaSkipReason } from "../../test/dhcp/support/kea.js";
import { runOk, which } from "../../test/dhcp/support/run.js";
import { createKeaRig, type KeaRig } from "../../test/dhcp/support/rig.js";

/** 10.64.0.0/18: gateway .0.1, DHCP .0.2, DNS .0.3, proxy .0.4, pool 10.64.60.0–10.64.63.254. */
const SPEC = {
  networkConfig: { cidr: "10.64.0.0/18", gateway: "10.64.0.1", networkAttachmentDefinition: "vlan100" },
  infraComponents: {
    dhcp: { serverIP: "10.64.0.2", rangeStart: "10.64.60.0", rangeEnd: "10.64.63.254" },
    dns: { serverIP: "10.64.0.3" },
    proxy: { serverIP: "10.64.0.4", internalProxyService: "10.96.0.44" },
  },
};
const SERVER = "10.64.0.2/18";
/** perfdhcp's relay address (giaddr), inside the subnet so Kea selects it. */
const RELAY = "10.64.0.250";
const SIZES = [10, 1_000, 5_000];
const RUNS: Record<number, number> = { 10: 60, 1_000: 30, 5_000: 15 };
const PERF_RESERVATIONS = 1_000;
const PERF_SECONDS = 8;
const PERF_RATE = 20_000;

function mac(i: number): string {
  const hex = i.toString(16).padStart(8, "0");
  return `02:42:${hex.slice(0, 2)}:${hex.slice(2, 4)}:${hex.slice(4, 6)}:${hex.slice(6, 8)}`;
}

/** VMI i holds 10.64.<1 + i/250>.<1 + i%250> (as KubeVirt would report after its first lease). */
function existingVmi(i: number): VirtualMachineInstance {
  return vmi(NS, `vm-${String(i)}`, mac(i), `10.64.${String(1 + Math.floor(i / 250))}.${String(1 + (i % 250))}`, {
    created: "2024-01-01T00:00:00Z",
  });
}

function stateWith(vmis: readonly VirtualMachineInstance[]): ClusterState {
  return combine({ infras: [infra("vlan100", SPEC)] }, { vmis: [...vmis] });
}

function dhcpModel(state: ClusterState): DhcpModel {
  const m = selectDhcpModel(build(state).topologies);
  if (m === undefined) throw new Error("no DHCP model");
  return m;
}

function percentile(sorted: readonly number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

function emit(o: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(o)}\n`);
}

async function benchApply(rig: KeaRig, size: number): Promise<void> {
  const sync = new KeaSync({
    socketPath: rig.work.controlSocket,
    leaseFile: rig.work.leaseFile,
    hooksDirectory: rig.hooksDirectory,
  });
  const base = Array.from({ length: size }, (_, i) => existingVmi(i));
  const first = await sync.update(dhcpModel(stateWith(base)));
  if (first?.status !== "applied") throw new Error(`base config not applied: ${JSON.stringify(first)}`);
  const total: number[] = [];
  const modelRender: number[] = [];
  const runs = RUNS[size] ?? 10;
  for (let r = 0; r < runs; r++) {
    // A new VMI without an address appears; the rest of the state is unchanged.
    const state = stateWith([...base, vmi(NS, `new-${String(r)}`, mac(1_000_000 + r))]);
    const t0 = performance.timeOrigin + performance.now();
    const model = dhcpModel(state);
    const cfg = sync.render(model);
    const t1 = performance.timeOrigin + performance.now();
    const result = await sync.applier.apply(cfg);
    if (result.status !== "applied") throw new Error(`run ${String(r)}: ${JSON.stringify(result)}`);
    total.push(result.setAt - t0);
    modelRender.push(t1 - t0);
  }
  sync.close();
  total.sort((a, b) => a - b);
  modelRender.sort((a, b) => a - b);
  emit({
    name: "dhcp.vmi_to_reservation",
    reservations: size + 1,
    runs,
    p50_ms: round(percentile(total, 50)),
    p99_ms: round(percentile(total, 99)),
    model_render_p50_ms: round(percentile(modelRender, 50)),
  });
}

/** DORA/s perfdhcp achieves against the running Kea, clients drawn from `macFile`. */
async function perfdhcp(rig: KeaRig, macFile: string): Promise<{ rate: number; sent: number; received: number }> {
  const r = await rig.client.exec(
    "perfdhcp",
    [
      "-4",
      "-l",
      RELAY,
      "-r",
      String(PERF_RATE),
      "-p",
      String(PERF_SECONDS),
      "-M",
      macFile,
      "-R",
      String(PERF_RESERVATIONS),
      SERVER.split("/")[0] ?? "",
    ],
    { timeoutMs: (PERF_SECONDS + 30) * 1000 },
  );
  const out = r.stdout + r.stderr;
  const rate = /Rate:\s*([0-9.]+)\s+4-way exchanges\/second/.exec(out)?.[1];
  if (rate === undefined) throw new Error(`perfdhcp gave no rate (exit ${String(r.code)}):\n${out}`);
  const sent = [...out.matchAll(/sent packets:\s*(\d+)/g)].map((m) => Number(m[1]));
  const received = [...out.matchAll(/received packets:\s*(\d+)/g)].map((m) => Number(m[1]));
  return { rate: Number(rate), sent: sent.at(-1) ?? 0, received: received.at(-1) ?? 0 };
}

/**
 * The smallest config a person would write for the same subnet: interface, socket, pool,
 * routers; with `reservations`, also a bare MAC → address list (the same addresses as ours).
 */
function minimalConfig(
  rig: KeaRig,
  reservations: readonly { "hw-address": string; "ip-address": string }[] = [],
): object {
  return {
    Dhcp4: {
      "interfaces-config": { "dhcp-socket-type": "raw", interfaces: ["net1"] },
      "control-socket": { "socket-type": "unix", "socket-name": rig.work.controlSocket },
      "lease-database": { type: "memfile", name: rig.work.leaseFile },
      "valid-lifetime": 3600,
      subnet4: [
        {
          id: 1,
          subnet: "10.64.0.0/18",
          pools: [{ pool: "10.64.60.0 - 10.64.63.254" }],
          "option-data": [{ name: "routers", data: "10.64.0.1" }],
          reservations,
        },
      ],
    },
  };
}

async function benchPerf(): Promise<void> {
  const vmis = Array.from({ length: PERF_RESERVATIONS }, (_, i) => vmi(NS, `vm-${String(i)}`, mac(i)));
  const macs = vmis.map((_, i) => mac(i));
  const model = dhcpModel(stateWith(vmis));
  const bare = model.reservations.map((r) => ({ "hw-address": r.hwAddress, "ip-address": r.ipAddress }));
  const rates: Record<string, number[]> = { generated: [], minimal: [], minimal_reserved: [] };
  const details: Record<string, unknown>[] = [];
  // Alternate the order so drift in machine load hits every config alike.
  const order = ["generated", "minimal", "minimal_reserved"];
  for (const round of [0, 1]) {
    for (const kind of round === 0 ? order : [...order].reverse()) {
      const rig = await createKeaRig({ serverAddress: SERVER, ports: 0 });
      try {
        await runOk("ip", ["-n", rig.client.name, "addr", "add", `${RELAY}/18`, "dev", "br0"]);
        const macFile = join(rig.work.dir, "macs.txt");
        writeFileSync(macFile, `${macs.join("\n")}\n`);
        if (kind === "generated") {
          const sync = new KeaSync({
            socketPath: rig.work.controlSocket,
            leaseFile: rig.work.leaseFile,
            hooksDirectory: rig.hooksDirectory,
          });
          rig.work.writeConfig(sync.render(model));
        } else {
          rig.work.writeConfig(minimalConfig(rig, kind === "minimal" ? [] : bare));
        }
        await rig.startKea();
        const r = await perfdhcp(rig, macFile);
        (rates[kind] ?? []).push(r.rate);
        details.push({ kind, ...r });
      } finally {
        await rig.destroy();
      }
    }
  }
  const median = (xs: readonly number[]): number =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  const ours = median(rates["generated"] ?? []);
  const minimal = median(rates["minimal"] ?? []);
  const reserved = median(rates["minimal_reserved"] ?? []);
  emit({
    name: "dhcp.perfdhcp_dora",
    reservations: PERF_RESERVATIONS,
    seconds: PERF_SECONDS,
    offered_rate: PERF_RATE,
    generated_dora_s: round(ours),
    minimal_dora_s: round(minimal),
    ratio: round(ours / minimal),
    minimal_reserved_dora_s: round(reserved),
    ratio_vs_minimal_reserved: round(ours / reserved),
    runs: details,
  });
}

const ALLOC_VMIS = 5_000;
const ALLOC_RUNS = 30;

function timed(runs: number, f: () => unknown): number[] {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    f();
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

function benchAllocation(): void {
  const cidr = parseCidr("10.64.0.0/16");
  if (cidr === undefined) throw new Error("bad CIDR");
  const live: LiveInterface[] = Array.from({ length: ALLOC_VMIS }, (_, i) => ({
    mac: mac(i),
    vmi: `${NS}/vm-${String(i)}`,
    reported: undefined,
  }));
  const input: AllocationInput = {
    infra: { kind: "Infra", namespace: NS, name: "vlan100" },
    cidr,
    pool: { first: cidr.first + 256, last: cidr.last - 1 },
    excluded: [{ first: cidr.first + 1, last: cidr.first + 4, what: "components" }],
    previous: [],
    live,
    now: Date.parse("2026-01-01T00:00:00Z"),
    graceSeconds: 3600,
  };
  const cold = timed(ALLOC_RUNS, () => buildAllocations(input, new Problems()));
  const table = buildAllocations(input, new Problems());
  const steadyInput = {
    ...input,
    previous: table,
    live: [...live, { mac: mac(ALLOC_VMIS), vmi: `${NS}/new`, reported: undefined }],
  };
  const steady = timed(ALLOC_RUNS, () => buildAllocations(steadyInput, new Problems()));
  // Baseline: what the old model did on every build before placing anyone — every host address
  // of the CIDR checked against the taken set into a free list.
  const taken = new Set(table.map((_, i) => cidr.first + 256 + i));
  const scan = timed(ALLOC_RUNS, () => {
    const free: number[] = [];
    for (let a = cidr.first; a <= cidr.last; a++) if (isHostAddress(cidr, a) && !taken.has(a)) free.push(a);
    return free;
  });
  emit({
    name: "dhcp.allocate_5000_vmis_slash16",
    vmis: ALLOC_VMIS,
    runs: ALLOC_RUNS,
    p50_ms: round(percentile(steady, 50)),
    p99_ms: round(percentile(steady, 99)),
    cold_p50_ms: round(percentile(cold, 50)),
    cold_p99_ms: round(percentile(cold, 99)),
    baseline_cidr_scan_p50_ms: round(percentile(scan, 50)),
    ratio: round(percentile(steady, 50) / percentile(scan, 50)),
  });
}

async function main(): Promise<void> {
  benchAllocation();
  const skip = await keaSkipReason();
  if (skip !== undefined) throw new Error(`cannot run: ${skip}`);
  for (const size of SIZES) {
    const rig = await createKeaRig({ serverAddress: SERVER, ports: 0 });
    try {
      await rig.startKea();
      await benchApply(rig, size);
    } finally {
      await rig.destroy();
    }
  }
  if ((await which("perfdhcp")) === undefined) {
    emit({ name: "dhcp.perfdhcp_dora", skipped: "perfdhcp not installed (apt-get install kea-admin)" });
    return;
  }
  await benchPerf();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
