package main

// Listener-manager rules: what Envoy refuses in a set of resources beyond protoc-gen-validate.
// Each names the documented rule it stands for, so a rejection says which one was broken.

import (
	"fmt"
	"strings"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcp "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// resourceSet is what one file delivers together: Envoy's cluster manager and listener manager
// see these as one configuration.
type resourceSet struct {
	listeners []*listener.Listener
	clusters  []*cluster.Cluster
	routes    []*route.RouteConfiguration
	// checkReferences is false when clusters may also arrive from elsewhere (a bootstrap with
	// dynamic CDS), so a name missing from this set is not a fault.
	checkReferences bool
}

// setRules applies every listener-manager rule to the set; each violation is one line.
func setRules(s resourceSet) []string {
	var out []string
	out = append(out, uniqueNames("listener", names(s.listeners, (*listener.Listener).GetName))...)
	out = append(out, uniqueNames("cluster", names(s.clusters, (*cluster.Cluster).GetName))...)
	out = append(out, uniqueNames("route configuration", names(s.routes, (*route.RouteConfiguration).GetName))...)
	known := map[string]bool{}
	for _, c := range s.clusters {
		known[c.GetName()] = true
	}
	refer := func(owner, where, name string) {
		if s.checkReferences && !known[name] {
			out = append(out, fmt.Sprintf("%s: %s names cluster %q, which is not among the clusters (unknown cluster)", owner, where, name))
		}
	}
	for _, l := range s.listeners {
		owner := fmt.Sprintf("listener %q", l.GetName())
		if l.GetFilterChainMatcher() != nil {
			out = append(out, matcherChains(owner, l)...)
		} else {
			out = append(out, duplicateMatches(owner, l)...)
		}
		for i, lf := range l.GetListenerFilters() {
			out = append(out, filterKind(owner, fmt.Sprintf("listener_filters[%d]", i), lf.GetTypedConfig(), "listener")...)
		}
		chains := l.GetFilterChains()
		paths := make([]string, 0, len(chains)+1)
		for i := range chains {
			paths = append(paths, fmt.Sprintf("filter_chains[%d]", i))
		}
		if l.GetDefaultFilterChain() != nil {
			chains = append(chains, l.GetDefaultFilterChain())
			paths = append(paths, "default_filter_chain")
		}
		for ci, chain := range chains {
			for fi, f := range chain.GetFilters() {
				where := fmt.Sprintf("%s.filters[%d]", paths[ci], fi)
				out = append(out, filterKind(owner, where, f.GetTypedConfig(), "network")...)
				switch cfg := unpacked(f.GetTypedConfig()).(type) {
				case *tcp.TcpProxy:
					if c := cfg.GetCluster(); c != "" {
						refer(owner, where+" (tcp_proxy cluster)", c)
					}
					for wi, w := range cfg.GetWeightedClusters().GetClusters() {
						refer(owner, fmt.Sprintf("%s (tcp_proxy weighted_clusters[%d])", where, wi), w.GetName())
					}
				case *hcm.HttpConnectionManager:
					for hi, h := range cfg.GetHttpFilters() {
						out = append(out, filterKind(owner, fmt.Sprintf("%s.http_filters[%d]", where, hi), h.GetTypedConfig(), "http")...)
					}
					if rc := cfg.GetRouteConfig(); rc != nil {
						routeClusters(rc, func(at, name string) { refer(owner, where+".route_config."+at, name) })
					}
				}
			}
		}
	}
	for _, rc := range s.routes {
		owner := fmt.Sprintf("route configuration %q", rc.GetName())
		routeClusters(rc, func(at, name string) { refer(owner, at, name) })
	}
	return out
}

func names[T any](items []T, name func(T) string) []string {
	out := make([]string, len(items))
	for i, item := range items {
		out[i] = name(item)
	}
	return out
}

// uniqueNames: Envoy's managers key listeners, clusters and route configurations by name; a
// second resource of a name replaces or is refused, so a set that holds two is a fault.
func uniqueNames(what string, list []string) []string {
	var out []string
	first := map[string]int{}
	for i, n := range list {
		if j, seen := first[n]; seen {
			out = append(out, fmt.Sprintf("duplicate %s name %q (entries %d and %d): names must be unique", what, n, j, i))
			continue
		}
		first[n] = i
	}
	return out
}

// filterKind: a typed_config stands for an extension of the category its position asks for
// (network filters in a chain, listener filters before it, HTTP filters in the connection
// manager); Envoy finds no factory of that category for any other type.
func filterKind(owner, where string, a *anypb.Any, category string) []string {
	if a == nil {
		return nil
	}
	name := strings.TrimPrefix(a.GetTypeUrl(), "type.googleapis.com/")
	if strings.HasPrefix(name, "envoy.extensions.filters."+category+".") {
		return nil
	}
	return []string{fmt.Sprintf("%s: %s typed_config %s is not a %s filter type (filter type not allowed here)", owner, where, name, category)}
}

func unpacked(a *anypb.Any) proto.Message {
	if a == nil {
		return nil
	}
	m, err := a.UnmarshalNew()
	if err != nil {
		return nil
	}
	return m
}

// routeClusters calls found for every cluster a route configuration's routes send to.
func routeClusters(rc *route.RouteConfiguration, found func(at, name string)) {
	for vi, vh := range rc.GetVirtualHosts() {
		for ri, r := range vh.GetRoutes() {
			at := fmt.Sprintf("virtual_hosts[%d].routes[%d]", vi, ri)
			if c := r.GetRoute().GetCluster(); c != "" {
				found(at+" (route cluster)", c)
			}
			for wi, w := range r.GetRoute().GetWeightedClusters().GetClusters() {
				found(fmt.Sprintf("%s (weighted_clusters[%d])", at, wi), w.GetName())
			}
		}
	}
}

// duplicateMatches: Envoy's filter chain manager refuses a listener in which two filter chains
// have the same filter_chain_match (an absent match is the empty one).
func duplicateMatches(owner string, l *listener.Listener) []string {
	var out []string
	chains := l.GetFilterChains()
	for i := range chains {
		for j := 0; j < i; j++ {
			if proto.Equal(matchOf(chains[i]), matchOf(chains[j])) {
				out = append(out, fmt.Sprintf("%s: filter_chains[%d] (%q) has the same filter_chain_match as filter_chains[%d] (%q) (duplicate filter chain match)",
					owner, i, chains[i].GetName(), j, chains[j].GetName()))
				break
			}
		}
	}
	return out
}

func matchOf(c *listener.FilterChain) *listener.FilterChainMatch {
	if m := c.GetFilterChainMatch(); m != nil {
		return m
	}
	return &listener.FilterChainMatch{}
}

// matcherChains: with a filter_chain_matcher, Envoy picks a chain by the name its action gives and
// ignores every filter_chain_match. It requires every chain uniquely named; an action naming no
// chain makes the connection fall to the default chain or be closed, and a chain no action names
// is never used (intro/arch_overview/advanced/matching/matching_listener).
func matcherChains(owner string, l *listener.Listener) []string {
	var out []string
	chains := map[string]bool{}
	for i, c := range l.GetFilterChains() {
		switch name := c.GetName(); {
		case name == "":
			out = append(out, fmt.Sprintf("%s: filter_chains[%d] has no name (filter_chain_matcher needs uniquely named chains)", owner, i))
		case chains[name]:
			out = append(out, fmt.Sprintf("%s: filter_chains[%d] name %q is not unique (filter_chain_matcher needs uniquely named chains)", owner, i, name))
		default:
			chains[name] = true
		}
	}
	named := map[string]bool{}
	var order []string
	for _, found := range unpackAll(l.GetFilterChainMatcher()) {
		if found.err != nil {
			continue // reported by validateDeep
		}
		actionNames(found.msg.ProtoReflect(), func(name string) {
			if !named[name] {
				named[name] = true
				order = append(order, name)
			}
		})
	}
	for _, name := range order {
		if !chains[name] {
			out = append(out, fmt.Sprintf("%s: filter_chain_matcher names filter chain %q, which the listener does not have (unknown filter chain)", owner, name))
		}
	}
	for _, c := range l.GetFilterChains() {
		if c.GetName() != "" && !named[c.GetName()] {
			out = append(out, fmt.Sprintf("%s: filter chain %q is named by no filter_chain_matcher action (unreachable filter chain)", owner, c.GetName()))
		}
	}
	return out
}

// actionNames calls found with the chain name of every action in m: a TypedExtensionConfig
// field named "action" whose typed_config is a google.protobuf.StringValue. Nested matchers inside
// an Any (custom matchers) are reached through unpackAll, which lists them as messages of their own.
func actionNames(m protoreflect.Message, found func(string)) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind {
			return true
		}
		visit := func(child protoreflect.Message) {
			if fd.Name() == "action" {
				if a, ok := child.Interface().(interface{ GetTypedConfig() *anypb.Any }); ok {
					var s wrapperspb.StringValue
					if a.GetTypedConfig().MessageIs(&s) && a.GetTypedConfig().UnmarshalTo(&s) == nil {
						found(s.GetValue())
					}
				}
			}
			if _, isAny := child.Interface().(*anypb.Any); !isAny {
				actionNames(child, found)
			}
		}
		switch {
		case fd.IsList():
			for i := 0; i < v.List().Len(); i++ {
				visit(v.List().Get(i).Message())
			}
		case fd.IsMap():
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					visit(mv.Message())
					return true
				})
			}
		default:
			visit(v.Message())
		}
		return true
	})
}
