package main

import (
	"fmt"
	"path/filepath"
	"strings"

	bootstrap "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	// The Any types oooi's bootstrap holds (typed_extension_protocol_options, the ADS transport
	// socket), registered so protojson resolves them and the Any walk validates their content.
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
)

// isBootstrap: a file named bootstrap*.yaml, .yml or .json holds an Envoy bootstrap; anything
// else is an envoy.json resource document.
func isBootstrap(file string) bool {
	base := filepath.Base(file)
	ext := filepath.Ext(base)
	return strings.HasPrefix(base, "bootstrap") && (ext == ".yaml" || ext == ".yml" || ext == ".json")
}

// checkBootstrap applies every rule to an envoy.config.bootstrap.v3.Bootstrap in YAML or JSON,
// read as `envoy -c` reads it: YAML becomes JSON, then a strict proto3 JSON parse.
func checkBootstrap(data []byte) (violations []string, summary string) {
	// JSON is YAML, so one conversion reads both; duplicate keys are refused.
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return []string{fmt.Sprintf("not a YAML or JSON document: %v", err)}, ""
	}
	b := &bootstrap.Bootstrap{}
	if err := (protojson.UnmarshalOptions{}).Unmarshal(js, b); err != nil {
		return []string{fmt.Sprintf("does not parse as bootstrap: %v", err)}, ""
	}
	for _, v := range validateDeep(b) {
		violations = append(violations, "bootstrap: "+v)
	}
	static := b.GetStaticResources()
	// Static listeners may send to clusters CDS delivers later, so references are only checked
	// when the static clusters are all there will be.
	dynamicCds := b.GetDynamicResources().GetCdsConfig() != nil || b.GetDynamicResources().GetCdsResourcesLocator() != ""
	violations = append(violations, setRules(resourceSet{
		listeners:       static.GetListeners(),
		clusters:        static.GetClusters(),
		checkReferences: !dynamicCds,
	})...)
	// The ADS stream starts before CDS, so its Envoy gRPC cluster must be a static one
	// (config_source.proto ApiConfigSource: "must be statically defined").
	staticClusters := map[string]bool{}
	for _, c := range static.GetClusters() {
		staticClusters[c.GetName()] = true
	}
	for i, g := range b.GetDynamicResources().GetAdsConfig().GetGrpcServices() {
		if name := g.GetEnvoyGrpc().GetClusterName(); name != "" && !staticClusters[name] {
			violations = append(violations, fmt.Sprintf("bootstrap: dynamic_resources.ads_config.grpc_services[%d] names cluster %q, which is not a static cluster (unknown cluster)", i, name))
		}
	}
	return violations, fmt.Sprintf("bootstrap: %d static listeners, %d static clusters", len(static.GetListeners()), len(static.GetClusters()))
}
