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

# kube: kube-apiserver, kube-controller-manager and etcd.
# Neither k8s.io/kubernetes nor go.etcd.io/etcd/server/v3 can be `go install`ed: their go.mod files
# replace sibling modules with local paths. So each is built from a throwaway wrapper module in the
# cache that requires it and pins those siblings to their published versions instead.
KUBE_VERSION=v1.34.4
ETCD_VERSION=v3.6.16

# go_build_wrapped DIR MODULE@VERSION LDFLAGS PKG... : builds each PKG (a main package of MODULE)
# into DIR through a wrapper module whose replace lines come from MODULE's own go.mod.
go_build_wrapped() {
  local dir="$1" modver="$2" ldflags="$3"; shift 3
  local mod="${modver%@*}" ver="${modver#*@}" wrap="$dir/.wrapper"
  mkdir -p "$wrap"
  local gomod
  gomod="$(go mod download -json "$modver" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
  [ -n "$gomod" ] || { echo "go mod download $modver gave no go.mod" >&2; return 1; }
  {
    echo "module oooi.test/peers-wrapper"
    # The module's own language version and godebug defaults, so the binary behaves as its release does.
    grep -E '^(go|godebug) ' "$gomod"
    echo "require $mod $ver"
    # "k8s.io/api => ./staging/src/k8s.io/api" becomes "k8s.io/api => k8s.io/api v0.34.4" (etcd: "=> ../api" and the module's version).
    sed -n 's/^[[:space:]]*\(replace[[:space:]]\)\{0,1\}\([^[:space:]]*\)[[:space:]]*=>[[:space:]]*\.\{1,2\}\/.*$/\2/p' "$gomod" \
      | while read -r dep; do
          [ "$dep" = "$mod" ] && continue
          # Only siblings it requires (etcd also points modules it forbids at a missing directory).
          grep -Eq "^[[:space:]]*(require[[:space:]]+)?$dep[[:space:]]+v" "$gomod" || continue
          echo "replace $dep => $dep $SIBLING_VERSION"
        done
  } >"$wrap/go.mod"
  local pkg
  for pkg in "$@"; do
    echo "building $pkg ($modver) into $dir" >&2
    # Linked beside the target and moved into place, so an interrupted build leaves no half binary.
    (cd "$wrap" && go build -trimpath -ldflags "-s -w $ldflags" -o "$wrap/out" "$pkg") >&2
    mv "$wrap/out" "$dir/$(basename "$pkg")"
  done
}

install_kube() {
  local kdir="$cache/kubernetes-$KUBE_VERSION" edir="$cache/etcd-$ETCD_VERSION"
  if [ ! -x "$kdir/kube-apiserver" ] || [ ! -x "$kdir/kube-controller-manager" ]; then
    local minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
    # Discovery (/version) reports these, as a release build would; without them it says v0.0.0.
    local v="" p
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      v="$v -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
      v="$v -X $p.buildDate=1970-01-01T00:00:00Z"
    done
    SIBLING_VERSION="v0.${KUBE_VERSION#v1.}" go_build_wrapped "$kdir" "k8s.io/kubernetes@$KUBE_VERSION" "$v" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
  fi
  if [ ! -x "$edir/etcd" ]; then
    SIBLING_VERSION="$ETCD_VERSION" go_build_wrapped "$edir" "go.etcd.io/etcd/server/v3@$ETCD_VERSION" "" \
      go.etcd.io/etcd/server/v3
    mv "$edir/v3" "$edir/etcd"
  fi
  echo "$edir/etcd"
  echo "$kdir/kube-apiserver"
  echo "$kdir/kube-controller-manager"
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
