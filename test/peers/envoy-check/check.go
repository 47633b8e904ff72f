package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cache "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	// The typed_config extensions oooi renders: importing them registers their types, so
	// protojson resolves "@type" and the Any walk can unpack and validate them.
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	// filter_chain_matcher (--filter-chain-matcher): the network inputs, and the IP and server-name
	// matchers (xds.type.matcher.v3) its trees use.
	_ "github.com/cncf/xds/go/xds/type/matcher/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/matching/common_inputs/network/v3"
)

// kind is one resource list of an envoy.json file.
type kind struct {
	key     string // field of the file
	what    string // how a resource of this kind is named in messages
	typeURL resource.Type
	newMsg  func() proto.Message
}

var kinds = []kind{
	{"listeners", "listener", resource.ListenerType, func() proto.Message { return &listener.Listener{} }},
	{"clusters", "cluster", resource.ClusterType, func() proto.Message { return &cluster.Cluster{} }},
	{"endpoints", "ClusterLoadAssignment", resource.EndpointType, func() proto.Message { return &endpoint.ClusterLoadAssignment{} }},
	{"routes", "route configuration", resource.RouteType, func() proto.Message { return &route.RouteConfiguration{} }},
}

type report struct {
	violations []string
	counts     map[string]int
}

func (r *report) summary() string {
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", r.counts[k.key], k.key))
	}
	return strings.Join(parts, ", ")
}

// checkFile applies every rule to one envoy.json document.
func checkFile(data []byte) *report {
	r := &report{counts: map[string]int{}}
	var doc map[string][]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		r.violations = append(r.violations, fmt.Sprintf("not an envoy.json document: %v", err))
		return r
	}
	known := map[string]bool{}
	resources := map[resource.Type][]types.Resource{}
	for _, k := range kinds {
		known[k.key] = true
		for i, raw := range doc[k.key] {
			msg := k.newMsg()
			label := fmt.Sprintf("%s[%d]", k.key, i)
			if err := (protojson.UnmarshalOptions{}).Unmarshal(raw, msg); err != nil {
				r.violations = append(r.violations, fmt.Sprintf("%s: does not parse as %s: %v", label, k.what, err))
				continue
			}
			label = fmt.Sprintf("%s %q", k.what, cache.GetResourceName(msg))
			for _, v := range validateDeep(msg) {
				r.violations = append(r.violations, fmt.Sprintf("%s: %s", label, v))
			}
			resources[k.typeURL] = append(resources[k.typeURL], msg)
			r.counts[k.key]++
		}
	}
	for key := range doc {
		if !known[key] {
			r.violations = append(r.violations, fmt.Sprintf("unknown top-level field %q", key))
		}
	}
	set := resourceSet{checkReferences: true}
	for _, m := range resources[resource.ListenerType] {
		set.listeners = append(set.listeners, m.(*listener.Listener))
	}
	for _, m := range resources[resource.ClusterType] {
		set.clusters = append(set.clusters, m.(*cluster.Cluster))
	}
	for _, m := range resources[resource.RouteType] {
		set.routes = append(set.routes, m.(*route.RouteConfiguration))
	}
	r.violations = append(r.violations, setRules(set)...)
	if len(r.violations) > 0 {
		return r
	}
	snapshot, err := cache.NewSnapshot("check", resources)
	if err == nil {
		err = snapshot.Consistent()
	}
	if err != nil {
		r.violations = append(r.violations, fmt.Sprintf("snapshot not consistent: %v", err))
	}
	return r
}

// multiError is what protoc-gen-validate's ValidateAll returns: every violation at once.
type multiError interface{ AllErrors() []error }

// validateDeep runs ValidateAll on msg and on every message packed in an Any inside it.
func validateDeep(msg proto.Message) []string {
	var out []string
	for _, found := range unpackAll(msg) {
		if found.err != nil {
			out = append(out, fmt.Sprintf("%s: %v", found.path, found.err))
			continue
		}
		v, ok := found.msg.(interface{ ValidateAll() error })
		if !ok {
			continue
		}
		err := v.ValidateAll()
		if err == nil {
			continue
		}
		errs := []error{err}
		var multi multiError
		if errors.As(err, &multi) {
			errs = multi.AllErrors()
		}
		for _, e := range errs {
			where := found.path
			if where == "" {
				out = append(out, e.Error())
			} else {
				out = append(out, fmt.Sprintf("%s (%s): %v", where, found.msg.ProtoReflect().Descriptor().FullName(), e))
			}
		}
	}
	return out
}
