#!/usr/bin/env bash
# demo.sh tells the tollgate story on the example repositories and doubles
# as a smoke test: it exits non-zero when any expectation fails.
#
#   1. examples/config-repo, an Argo CD config repository, passes: every
#      Application is rendered the way Argo CD would render it and nothing
#      breaks a rule.
#   2. Each examples/bad/<case> makes one bad change and is denied by exactly
#      the rule its CASE file names.
#   3. tollgate diff shows what one of those changes (latest-tag) does to the
#      config repository's Applications, in a Git repository made for it,
#      and marks its denial as introduced by the change.
#
# Run by `make demo-cli` after `make build`; TOLLGATE overrides the binary.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

TOLLGATE=${TOLLGATE:-bin/tollgate}
REPO_URL=https://github.com/tollgate-dev/example-config.git
PROJECT=examples/config-repo/argocd/projects/team-web.yaml

if [[ ! -x $TOLLGATE ]]; then
	echo "demo: $TOLLGATE not found; run 'make build' first" >&2
	exit 2
fi

if [[ -t 1 ]]; then
	bold=$'\e[1m' green=$'\e[32m' red=$'\e[31m' reset=$'\e[0m'
else
	bold='' green='' red='' reset=''
fi

failures=0
checks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { checks=$((checks + 1)); echo "   ${green}ok${reset}: $*"; }
bad() { checks=$((checks + 1)); failures=$((failures + 1)); echo "   ${red}FAILED${reset}: $*"; }

# run OUT_FILE ARGS... runs tollgate test and prints its exit status.
run() {
	local out=$1
	shift
	local rc=0
	"$TOLLGATE" test --repo-url "$REPO_URL" "$@" >"$out" 2>"$out.err" || rc=$?
	echo "$rc"
}

# denied_rules JSON_FILE prints the sorted, unique rule ids denied in a json
# report.
denied_rules() {
	awk '
		/"rule":/ { rule = $2; gsub(/[",]/, "", rule) }
		/"severity": "deny"/ { print rule }
	' "$1" | sort -u
}

# show TEXT_FILE prints the violation lines of a text report, without the
# advice after the first semicolon.
show() {
	grep -E '^(DENY|WARN) ' "$1" | sed -e 's/;.*//' -e 's/^/   /' || true
}

echo "${bold}tollgate demo${reset}: one evaluator for pull requests, admission and sync"
echo
echo "${bold}1. A clean Argo CD config repository${reset} (examples/config-repo)"
echo "   kustomize overlays, a Helm chart, a PreSync hook with sync waves, one tight AppProject"
rc=$(run "$tmp/clean.txt" --repo-root examples/config-repo examples/config-repo)
sed 's/^/   /' "$tmp/clean.txt"
if [[ $rc == 0 ]]; then
	ok "every Application rendered from the checkout, nothing denied (exit 0)"
else
	bad "expected exit 0, got $rc"
	sed 's/^/   /' "$tmp/clean.txt.err"
fi

echo
echo "${bold}2. One bad change at a time${reset} (examples/bad/<case>, with the team-web project)"
for dir in examples/bad/*/; do
	dir=${dir%/}
	name=$(basename "$dir")
	if [[ ! -f $dir/CASE ]]; then
		bad "$dir has no CASE file"
		continue
	fi
	want=$(head -n1 "$dir/CASE" | tr -d '[:space:]')
	echo
	echo "-- ${bold}$name${reset}: expect $want"
	args=(--repo-root "$dir" --project "$PROJECT" "$dir")
	rc=$(run "$tmp/$name.json" -o json "${args[@]}")
	run "$tmp/$name.txt" "${args[@]}" >/dev/null
	show "$tmp/$name.txt"
	got=$(denied_rules "$tmp/$name.json" | paste -sd, -)
	if [[ $rc == 1 && $got == "$want" ]]; then
		ok "denied by $want (exit 1)"
	else
		bad "expected exit 1 denied by $want only, got exit $rc denied by '${got}'"
		sed 's/^/   /' "$tmp/$name.json.err"
	fi
done

echo
echo "${bold}3. What the pull request changes${reset} (tollgate diff of examples/bad/latest-tag on the config repository)"
if ! command -v git >/dev/null; then
	bad "git is not installed"
else
	repo="$tmp/diff-repo"
	cp -R examples/config-repo "$repo"
	git -C "$repo" init -q -b main
	git -C "$repo" remote add origin "$REPO_URL"
	git -C "$repo" add -A
	git -C "$repo" -c user.name=demo -c user.email=demo@example.com commit -q -m "config repository"
	cp examples/bad/latest-tag/deployment.yaml "$repo/apps/guestbook/base/deployment.yaml"
	rc=0
	"$TOLLGATE" diff --color never "$repo" >"$tmp/diff.txt" 2>"$tmp/diff.txt.err" || rc=$?
	"$TOLLGATE" diff -o json "$repo" >"$tmp/diff.json" 2>/dev/null || true
	sed -n -e '/^Application /p' -e '/^Path /p' -e '/^  [a-z]* .*Deployment/p' -e '/^    [-+] *- *image:/p' -e 's/;.*//' -e '/^    DENY/p' "$tmp/diff.txt" | sed 's/^/   /'
	tail -n 1 "$tmp/diff.txt" | sed 's/^/   /'
	if [[ $rc == 1 ]] && grep -q '"introducedDenials": [1-9]' "$tmp/diff.json" && grep -q 'DENY no-latest-tag (introduced)' "$tmp/diff.txt"; then
		ok "the change's no-latest-tag denial is marked introduced (exit 1)"
	else
		bad "expected exit 1 with no-latest-tag introduced, got exit $rc"
		sed 's/^/   /' "$tmp/diff.txt.err"
	fi
fi

echo
if ((failures > 0)); then
	echo "${red}${bold}demo failed${reset}: $failures of $checks expectations not met"
	exit 1
fi
echo "${green}${bold}demo passed${reset}: $checks of $checks expectations met"
