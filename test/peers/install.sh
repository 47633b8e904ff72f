#!/usr/bin/env bash
# Installs the real test peers (built from the Go module proxy) into a cache outside the repo,
# unless already there, and prints each binary's absolute path, one per line.
#   test/peers/install.sh coredns | kube | envoy-check ...   (no argument: all)
# Shared by .ci/run and the tests (test/support/peers.ts reads the same paths).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${OOOI_PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/oooi-peers}"
export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:--mod=mod}"
mkdir -p "$cache"

COREDNS_VERSION=v1.14.7

install_coredns() {
  local dir="$cache/coredns-$COREDNS_VERSION"
  if [ ! -x "$dir/coredns" ]; then
    echo "building coredns $COREDNS_VERSION into $dir" >&2
    GOBIN="$dir" go install "github.com/coredns/coredns@$COREDNS_VERSION" >&2
  fi
  echo "$dir/coredns"
}

# kube: kube-apiserver, kube-controller-manager and etcd (see the kube section below).
install_kube() {
  echo "kube peers are not wired yet" >&2
  return 1
}

# envoy-check: Envoy's validation rules (go-control-plane), test/peers/envoy-check.
install_envoy_check() {
  echo "envoy-check is not wired yet" >&2
  return 1
}

peers=("$@")
[ ${#peers[@]} -gt 0 ] || peers=(coredns kube envoy-check)
for p in "${peers[@]}"; do
  case "$p" in
    coredns) install_coredns ;;
    kube) install_kube ;;
    envoy-check) install_envoy_check ;;
    *) echo "unknown peer $p (coredns, kube, envoy-check)" >&2; exit 2 ;;
  esac
done
