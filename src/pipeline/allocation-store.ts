// The DHCP allocation tables between renderings, and their persisted form: `oooi serve --out DIR`
// keeps them in DIR/dhcp-allocations.json, read back at start, so addresses survive a restart of
// serve. The operator keeps the same tables in each DHCPServer's status instead
// (src/operator/inputs/allocations.ts).
import { closeSync, constants, fstatSync, openSync, readFileSync, statSync } from "node:fs";
import type { DHCPAllocation } from "../api/schema.js";
import { sameAllocationTable } from "../model/allocations.js";
import type { Outputs, RenderedInfra } from "./outputs.js";
import { patchMap } from "../util/overlay-map.js";

/** File name, relative to --out. */
export const ALLOCATIONS_FILE = "dhcp-allocations.json";

export type AllocationTables = ReadonlyMap<string, readonly DHCPAllocation[]>;

/** A state file that exists but cannot be used: serve must not start over on an empty table silently. */
export class AllocationFileError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path}: ${reason}`);
    this.name = "AllocationFileError";
  }
}

/**
 * Tables as last written. A missing file is an empty start; an unreadable one throws
 * AllocationFileError (starting empty would hand live VMs' addresses to others).
 */
export function readAllocationFile(path: string): Map<string, readonly DHCPAllocation[]> {
  let text: string;
  try {
    text = readRegularFile(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return new Map();
    throw e instanceof AllocationFileError ? e : new AllocationFileError(path, (e as Error).message);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new AllocationFileError(path, `not JSON: ${(e as Error).message}`);
  }
  const servers = (parsed as { dhcpServers?: unknown } | null)?.dhcpServers;
  if (servers === null || typeof servers !== "object" || Array.isArray(servers)) {
    throw new AllocationFileError(path, "no dhcpServers object");
  }
  // Entries are checked by the model (it drops what it cannot serve); here only the shape.
  const out = new Map<string, readonly DHCPAllocation[]>();
  for (const [name, table] of Object.entries(servers as Record<string, unknown>)) {
    if (Array.isArray(table)) out.set(name, table as DHCPAllocation[]);
  }
  return out;
}

/**
 * The file's text, read only when it is a regular file: opening a FIFO blocks until a writer
 * comes (at start, before anything is logged), a device may never end. The descriptor is opened
 * non-blocking and checked itself, so a name swapped after the stat does not block either.
 */
function readRegularFile(path: string): string {
  const refuse = (s: { isFile(): boolean }): void => {
    if (!s.isFile()) throw new AllocationFileError(path, "not a regular file (a FIFO, socket, device or folder)");
  };
  refuse(statSync(path));
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    refuse(fstatSync(fd));
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

export function encodeAllocationFile(tables: AllocationTables): string {
  const sorted = [...tables.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${JSON.stringify({ dhcpServers: Object.fromEntries(sorted) }, null, 2)}\n`;
}

/** The tables kept across renderings: a DHCPServer missing from one rendering (its Infra briefly invalid) keeps its table. */
export class AllocationStore {
  #tables: AllocationTables;
  /** The renderings of the outputs last taken: the next outputs' delta says what differs from them. */
  #seen: ReadonlyMap<string, RenderedInfra> | undefined;

  constructor(initial: AllocationTables = new Map()) {
    this.#tables = new Map(initial);
  }

  get tables(): AllocationTables {
    return this.#tables;
  }

  /**
   * Takes each DHCPServer's new table. The same map while every table says what it said (a change
   * elsewhere): the next build then sees the tables unchanged without comparing them. Outputs that
   * continue from those taken last are read by their delta: only the Infras rendered again.
   */
  update(outputs: Outputs): void {
    const delta = this.#seen !== undefined && outputs.delta?.from === this.#seen ? outputs.delta : undefined;
    const topologies = delta === undefined ? outputs.model.topologies : delta.rendered.map((r) => r.topology);
    this.#seen = outputs.byInfra;
    const changed = new Map<string, readonly DHCPAllocation[]>();
    for (const t of topologies) {
      if (t.dhcp === undefined) continue;
      const { name, allocations } = t.dhcp;
      if (!this.#tables.has(name) || !sameAllocationTable(this.#tables.get(name), allocations))
        changed.set(name, allocations);
    }
    this.#tables = patchMap(this.#tables, changed);
  }

  encode(): string {
    return encodeAllocationFile(this.#tables);
  }
}
