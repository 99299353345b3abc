#!/usr/bin/env bash
# fuzz-smoke.sh runs every Fuzz target briefly, so decoders stay fuzzed in CI.
set -euo pipefail
FUZZTIME="${FUZZTIME:-5s}"
cd "$(dirname "$0")/.."
for pkg in $(go list ./...); do
  dir="$(go list -f '{{.Dir}}' "$pkg")"
  for fn in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz: $pkg $fn ($FUZZTIME)"
    go test -run '^$' -fuzz "^${fn}\$" -fuzztime "$FUZZTIME" "$pkg"
  done
done
