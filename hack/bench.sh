#!/usr/bin/env bash
# bench.sh prints, in one run, `tollgate test` beside conftest running
# equivalent Rego (test/bench/conftest/policy.rego) over the same generated
# corpus, the Go benchmark of one decision, then `tollgate diff` on a
# generated repository of 200 Applications beside rendering every
# Application at both revisions (test/bench/diff). Figures are ratios
# measured in the same run: the machines are shared and noisy.
#
#   BENCH_FILES, BENCH_DOCS   corpus size (default 1000 files x 10 documents)
#   BENCH_RUNS                runs per tool, best wall time kept (default 3)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export GOTOOLCHAIN=local CGO_ENABLED=0

CONFTEST_VERSION=v0.71.1
cache="${TOLLGATE_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tollgate/tools}"
conftest="$cache/conftest-$CONFTEST_VERSION/conftest"
if [[ ! -x "$conftest" ]]; then
  echo "bench: building conftest $CONFTEST_VERSION into $cache (first time only, ~15 min)"
  GOBIN="$(dirname "$conftest")" go install "github.com/open-policy-agent/conftest@$CONFTEST_VERSION"
fi

files="${BENCH_FILES:-1000}" docs="${BENCH_DOCS:-10}" runs="${BENCH_RUNS:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
go run ./test/bench/corpus -out "$work/corpus" -files "$files" -docs "$docs"
total=$((files * docs))

# measure NAME CMD...: best-of-N wall seconds, CPU seconds and peak RSS (MiB)
# of a run; exit status 1 (denials found) is expected.
measure() {
  local name=$1; shift
  local best="" cpu="" rss=""
  for _ in $(seq "$runs"); do
    /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >"$work/$name.out" 2>"$work/$name.err" || true
    read -r wall user sys maxkb < <(tail -n 1 "$work/time")
    if [[ -z "$best" ]] || awk "BEGIN{exit !($wall < $best)}"; then
      best=$wall cpu=$(awk "BEGIN{print $user + $sys}") rss=$((maxkb / 1024))
    fi
  done
  echo "$name $best $cpu $rss"
}

t=$(measure tollgate bin/tollgate test -o json --no-builtin --policy test/bench/conftest "$work/corpus")
tb=$(measure tollgate-builtin bin/tollgate test -o json "$work/corpus")
c=$(measure conftest "$conftest" test --no-color -o json -p test/bench/conftest "$work/corpus")

print_table() {
  printf '%-34s %10s %10s %12s %10s\n' "tool ($total documents, $files files)" "wall s" "CPU s" "docs/s" "peak MiB"
  for row in "$@"; do
    read -r name wall cpu rss <<<"$row"
    printf '%-34s %10.2f %10.2f %12.0f %10d\n' "$name" "$wall" "$cpu" "$(awk "BEGIN{print $total / $wall}")" "$rss"
  done
}
echo
print_table "$t" "$tb" "$c"
read -r _ tw tc _ <<<"$t"
read -r _ cw cc _ <<<"$c"
echo
awk "BEGIN{printf \"throughput ratio tollgate/conftest (same Rego): %.1fx   CPU ratio conftest/tollgate: %.1fx\n\", $cw / $tw, $cc / $tc}"
# Both tools must have found the same denials, or the comparison is void.
tn=$(grep -o '"severity": "deny"' "$work/tollgate.out" | wc -l)
cn=$(grep -o '"msg":' "$work/conftest.out" | wc -l)
echo "denials found: tollgate $tn, conftest $cn"
[[ "$tn" == "$cn" ]] || { echo "bench: the tools disagree; figures are void" >&2; exit 1; }

echo
echo "Go benchmarks (one decision through all built-in rules, 1 CPU):"
go test -run '^$' -bench 'BenchmarkEvaluate(Deployment|Yardstick)$' -benchmem -cpu 1 -count 3 ./policies | grep -E '^Benchmark'

echo
echo "tollgate diff (test/bench/diff; best of $runs):"
go run ./test/bench/diff -tollgate bin/tollgate -runs "$runs"
