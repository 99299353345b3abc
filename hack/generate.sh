#!/usr/bin/env bash
# generate.sh regenerates the code and manifests derived from api/:
#
#   api/*/zz_generated.deepcopy.go               deepcopy functions
#   config/crd/bases/argoproj.io_*.yaml          the Application, AppProject and ApplicationSet CRDs
#   config/policyreport/bases/wgpolicyk8s.io_*   the PolicyReport CRDs the audit writes (optional)
#
# It runs controller-gen at a pinned version with `go run pkg@version`, which
# fetches it through the Go module proxy and leaves go.mod alone. Its output is
# committed; run this after changing api/ and commit the result.
#
# controller-gen cannot emit metadata labels, so the labels Argo CD puts on its
# own CRDs (app.kubernetes.io/name and app.kubernetes.io/part-of: argocd) are
# added afterwards: tools that look for Argo CD's CRDs by label find ours.
set -euo pipefail

CONTROLLER_TOOLS_VERSION=v0.23.0

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export GOTOOLCHAIN=local

controller_gen() { go run "sigs.k8s.io/controller-tools/cmd/controller-gen@${CONTROLLER_TOOLS_VERSION}" "$@"; }
controller_gen object paths=./api/...
controller_gen crd paths=./api/v1alpha1/... output:crd:artifacts:config=config/crd/bases
controller_gen crd paths=./api/wgpolicyk8s/... output:crd:artifacts:config=config/policyreport/bases

for f in config/crd/bases/argoproj.io_*.yaml; do
  name="$(awk '/^kind: CustomResourceDefinition$/ {crd=1} crd && /^  name: / {print $2; exit}' "$f")"
  if [[ -z "$name" ]]; then
    echo "generate: $f: no CustomResourceDefinition metadata.name found" >&2
    exit 1
  fi
  if grep -q '^  labels:$' "$f"; then
    echo "generate: $f: controller-gen now writes labels; update this script" >&2
    exit 1
  fi
  awk -v name="$name" '
    !done && $0 == "  name: " name {
      print "  labels:"
      print "    app.kubernetes.io/name: " name
      print "    app.kubernetes.io/part-of: argocd"
      done = 1
    }
    { print }
    END { if (!done) exit 1 }
  ' "$f" >"$f.tmp" || { rm -f "$f.tmp"; echo "generate: $f: cannot add labels" >&2; exit 1; }
  mv "$f.tmp" "$f"
done
echo "generate: ok"
