#!/usr/bin/env bash
# build-tools.sh builds the control-plane binaries the integration tests and
# `tollgate dev` run (etcd, kube-apiserver and kube-controller-manager) from
# source, using nothing but the Go module proxy. One line per step: the first
# build takes 10-16 minutes on 2 cores, later runs reuse the cache.
#
# Binaries go to a versioned cache outside the checkout and are linked into
# bin/k8s/. A binary already in the cache is reused; builds are reproducible,
# so the cache key is just the version.
#
#   TOLLGATE_TOOLS_DIR   cache directory (default ${XDG_CACHE_HOME:-$HOME/.cache}/tollgate/tools)
set -euo pipefail

K8S_VERSION=v1.37.2
ETCD_VERSION=v3.7.3

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${TOLLGATE_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tollgate/tools}"
k8s_dir="$cache/k8s-$K8S_VERSION"
etcd_dir="$cache/etcd-$ETCD_VERSION"
mkdir -p "$k8s_dir" "$etcd_dir" "$root/bin/k8s"

export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false"

build() { # build NAME DIR OUT PKG ESTIMATE [ARGS...]
  local name=$1 dir=$2 out=$3 pkg=$4 estimate=$5; shift 5
  if [[ -x "$out" ]]; then
    echo "tools: $name cached at $out"
    return
  fi
  echo "tools: building $name (first time only, $estimate)"
  local start=$SECONDS
  (cd "$root/hack/tools/$dir" && go build -trimpath "$@" -o "$out.tmp" "$pkg") &
  local pid=$!
  # A line a minute, so a long build is never a silent wait.
  while ! wait_for "$pid" 60; do
    echo "tools: still building $name ($(((SECONDS - start) / 60)) min)"
  done
  wait "$pid"
  mv "$out.tmp" "$out"
  echo "tools: built $name in $((SECONDS - start))s"
}

# wait_for PID SECONDS returns 0 once PID has exited, 1 after SECONDS.
wait_for() {
  local i
  for ((i = 0; i < $2; i++)); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 1
  done
  ! kill -0 "$1" 2>/dev/null
}

minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done

echo "tools: control plane $K8S_VERSION, etcd $ETCD_VERSION in $cache"
build etcd etcd "$etcd_dir/etcd" go.etcd.io/etcd/server/v3 "about 2 min on 2 cores" -ldflags "-s -w"
for bin in kube-apiserver kube-controller-manager; do
  estimate="about 12 min on 2 cores"
  [[ $bin == kube-controller-manager ]] && estimate="about 3 min more on 2 cores: it shares most packages with kube-apiserver"
  build "$bin" kubernetes "$k8s_dir/$bin" "k8s.io/kubernetes/cmd/$bin" "$estimate" \
    -tags selinux,notest,grpcnotrace -ldflags "$ldflags"
done

ln -sfn "$etcd_dir/etcd" "$root/bin/k8s/etcd"
ln -sfn "$k8s_dir/kube-apiserver" "$root/bin/k8s/kube-apiserver"
ln -sfn "$k8s_dir/kube-controller-manager" "$root/bin/k8s/kube-controller-manager"
if command -v kubectl >/dev/null 2>&1; then
  ln -sfn "$(command -v kubectl)" "$root/bin/k8s/kubectl"
fi
echo "tools: bin/k8s ready ($("$root/bin/k8s/kube-apiserver" --version))"
