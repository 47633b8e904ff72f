// A TLS listener as renderListeners makes it (every chain matched by filter_chain_match: transport
// protocol "tls", server names, source ranges) → the same listener with bare named chains, picked
// by a filter_chain_matcher: transport protocol → server name → source IP. Pure.
//
// Why (docs/reference.md#filter-chain-matcher): Envoy keeps a chain's connections across a listener
// update only when the new listener holds the same chain, and with filter_chain_match the match is
// part of the chain, so a worker joining (its /32 added to source_prefix_ranges) drains every
// connection of that chain. With the matcher API the workers' ranges live in the matcher, and "a
// change to the matcher only" drains nothing
// (https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/advanced/matching/matching_listener).
//
// The matcher picks what filter_chain_match picks, with one difference the documentation states:
// when the chains of a server name all list sources and the client is in none of them,
// filter_chain_match closes the connection, while the matcher falls back to a less specific
// wildcard or to the chains without server names. Such a listener is refused (`fallthrough`)
// rather than widened.
import type { CidrRange, FilterChain, IpMatcherConfig, Listener, Matcher, OnMatch } from "./envoy-types.js";
import {
  IP_MATCHER_TYPE_URL,
  SERVER_NAME_INPUT_TYPE_URL,
  SERVER_NAME_MATCHER_TYPE_URL,
  SOURCE_IP_INPUT_TYPE_URL,
  STRING_VALUE_TYPE_URL,
  TRANSPORT_PROTOCOL_INPUT_TYPE_URL,
} from "../../xds/resource/type-urls.js";

/** A server name whose clients outside the chains' sources would reach another chain through the matcher. */
export interface Fallthrough {
  readonly chain: string;
  readonly serverName: string;
  readonly message: string;
}

/** The listener with a filter_chain_matcher, or the fallthroughs that make it pick differently. */
export type MatcherListener =
  | { readonly ok: true; readonly listener: Listener }
  | { readonly ok: false; readonly fallthroughs: readonly Fallthrough[] };

/** Bare chains by the matched chain they come from: an unchanged chain keeps its bare object. */
const bare = new WeakMap<FilterChain, FilterChain>();

function bareChain(chain: FilterChain): FilterChain {
  let kept = bare.get(chain);
  if (kept === undefined) {
    kept = { name: chain.name, filters: chain.filters };
    bare.set(chain, kept);
  }
  return kept;
}

/** Chains listing the same server names (or none), in listener order. */
interface Group {
  readonly domains: string[];
  readonly chains: readonly FilterChain[];
}

/** Rewrites a listener whose chains carry filter_chain_match into its filter_chain_matcher form. */
export function withChainMatcher(listener: Listener): MatcherListener {
  const { groups, unnamed } = groupByServerName(listener.filter_chains);
  const fallthroughs = findFallthroughs(groups, unnamed);
  if (fallthroughs.length > 0) return { ok: false, fallthroughs };
  const byName: OnMatch | undefined =
    groups.length === 0
      ? bySource(unnamed)
      : {
          matcher: {
            matcher_tree: {
              input: {
                name: "envoy.matching.inputs.server_name",
                typed_config: { "@type": SERVER_NAME_INPUT_TYPE_URL },
              },
              custom_match: {
                name: "envoy.matching.custom_matchers.domain_matcher",
                typed_config: {
                  "@type": SERVER_NAME_MATCHER_TYPE_URL,
                  domain_matchers: groups.map((g) => ({ domains: g.domains, on_match: bySource(g.chains) })),
                },
              },
            },
            ...(unnamed.length > 0 ? { on_no_match: bySource(unnamed) } : {}),
          },
        };
  const matcher: Matcher = {
    matcher_tree: {
      input: {
        name: "envoy.matching.inputs.transport_protocol",
        typed_config: { "@type": TRANSPORT_PROTOCOL_INPUT_TYPE_URL },
      },
      // Every chain on 443/6443 is TLS passthrough: a plain-TCP client matches nothing.
      exact_match_map: { map: { tls: byName } },
    },
  };
  return {
    ok: true,
    listener: { ...listener, filter_chains: listener.filter_chains.map(bareChain), filter_chain_matcher: matcher },
  };
}

/** Server names grouped by the chains that list them (sorted names, groups in order of first name). */
function groupByServerName(chains: readonly FilterChain[]): { groups: Group[]; unnamed: FilterChain[] } {
  const chainsOf = new Map<string, FilterChain[]>();
  const unnamed: FilterChain[] = [];
  for (const chain of chains) {
    const names = chain.filter_chain_match?.server_names ?? [];
    if (names.length === 0) unnamed.push(chain);
    for (const name of names) {
      const list = chainsOf.get(name);
      if (list === undefined) chainsOf.set(name, [chain]);
      else list.push(chain);
    }
  }
  const groups = new Map<string, Group>();
  for (const name of [...chainsOf.keys()].sort()) {
    const list = chainsOf.get(name) ?? [];
    const key = list.map((c) => c.name).join("\n");
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { domains: [name], chains: list });
    else group.domains.push(name);
  }
  return { groups: [...groups.values()], unnamed };
}

function rangesOf(chain: FilterChain): readonly CidrRange[] {
  return chain.filter_chain_match?.source_prefix_ranges ?? [];
}

/**
 * A chain's range matcher, by chain: on a big VLAN a worker joining changes one chain, and the
 * matcher's other entries stay the objects the consistency check has already walked.
 */
const rangeEntries = new WeakMap<FilterChain, IpMatcherConfig["range_matchers"][number]>();

function action(chain: FilterChain): OnMatch {
  return { action: { name: chain.name, typed_config: { "@type": STRING_VALUE_TYPE_URL, value: chain.name } } };
}

function rangeEntry(chain: FilterChain): IpMatcherConfig["range_matchers"][number] {
  let entry = rangeEntries.get(chain);
  if (entry === undefined) {
    entry = { ranges: rangesOf(chain), on_match: action(chain) };
    rangeEntries.set(chain, entry);
  }
  return entry;
}

/**
 * The chain for the client's address among chains of one server name: the longest range wins, as
 * with filter_chain_match; a chain without ranges takes every other client.
 */
function bySource(chains: readonly FilterChain[]): OnMatch {
  const ranged = chains.filter((c) => rangesOf(c).length > 0);
  const open = chains.find((c) => rangesOf(c).length === 0);
  if (ranged.length === 0 && open !== undefined) return action(open);
  const trie: IpMatcherConfig = {
    "@type": IP_MATCHER_TYPE_URL,
    range_matchers: ranged.map(rangeEntry),
  };
  return {
    matcher: {
      matcher_tree: {
        input: { name: "envoy.matching.inputs.source_ip", typed_config: { "@type": SOURCE_IP_INPUT_TYPE_URL } },
        custom_match: { name: "envoy.matching.custom_matchers.trie_matcher", typed_config: trie },
      },
      ...(open !== undefined ? { on_no_match: action(open) } : {}),
    },
  };
}

/** Whether wildcard `w` ("*.b.c") covers `name` ("a.b.c" or "*.a.b.c") less specifically. */
function covers(w: string, name: string): boolean {
  return w.startsWith("*.") && w !== name && name.endsWith(w.slice(1));
}

/**
 * Server names of groups that can refuse a client (every chain lists sources) while a less
 * specific choice exists: a wildcard of another group, or chains without server names.
 */
function findFallthroughs(groups: readonly Group[], unnamed: readonly FilterChain[]): Fallthrough[] {
  const out: Fallthrough[] = [];
  for (const g of groups) {
    if (g.chains.some((c) => rangesOf(c).length === 0)) continue;
    for (const name of g.domains) {
      const wider = groups.find((o) => o !== g && o.domains.some((w) => covers(w, name)));
      const to = wider?.chains[0]?.name ?? unnamed[0]?.name;
      if (to === undefined) continue;
      const chain = g.chains[0]?.name ?? "";
      out.push({
        chain,
        serverName: name,
        message:
          `filter chain "${chain}": a client with server name "${name}" outside its source ranges would reach ` +
          `"${to}" through filter_chain_matcher instead of being refused; render without --filter-chain-matcher`,
      });
    }
  }
  return out;
}
