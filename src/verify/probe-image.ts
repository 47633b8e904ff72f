// The cluster probe pod's default image, apart from the probe so `oooi verify --help` shows it
// without loading the Kubernetes client.

/**
 * Default of `verify --probe-image`: the dnsutils image the Kubernetes documentation ("Debugging
 * DNS Resolution") runs dig from.
 */
export const DEFAULT_PROBE_IMAGE = "registry.k8s.io/e2e-test-images/jessie-dnsutils:1.3";
