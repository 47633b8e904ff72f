// "<namespace>/<name>" of a topology's Infra: the key the incremental build, the renderings and serve's
// load report share. Made once per topology (topologies are immutable and kept while unchanged), so
// a change does not build 3,000 strings again to find its one Infra.
import type { Topology } from "./types.js";

const keys = new WeakMap<Topology, string>();

export function topologyKey(t: Topology): string {
  let key = keys.get(t);
  if (key === undefined) {
    key = `${t.infra.namespace}/${t.infra.name}`;
    keys.set(t, key);
  }
  return key;
}
