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
# The cache directory is named for a content hash of the module's files (go.mod, go.sum, *.go),
# so an edited checker is rebuilt; test/support/envoy-check.ts computes the same hash:
# sha256 of the `sha256sum` lines of those files in C-locale name order, first 16 hex digits.
envoy_check_hash() {
  (cd "$here/envoy-check" && LC_ALL=C ls go.mod go.sum *.go | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -c1-16
}

install_envoy_check() {
  local dir="$cache/envoy-check-$(envoy_check_hash)"
  if [ ! -x "$dir/envoy-check" ]; then
    echo "building envoy-check into $dir" >&2
    mkdir -p "$dir"
    (cd "$here/envoy-check" && go build -trimpath -o "$dir/envoy-check.tmp.$$" .) >&2
    mv -f "$dir/envoy-check.tmp.$$" "$dir/envoy-check"
  fi
  echo "$dir/envoy-check"
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
