package policies

import (
	"testing"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestNamespaceMatchesAgreesWithTheRule: the Go matcher the controller and
// the repo-server use (v1alpha1.NamespaceMatches) answers as app-namespace
// judges an Application outside the Argo CD namespace (exact names, globs,
// /regular expressions/), so the rule and the engine never disagree.
func TestNamespaceMatchesAgreesWithTheRule(t *testing.T) {
	e, err := New(t.Context(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		patterns []string
		ns       string
		want     bool
	}{
		{"listed", []string{"team-a"}, "team-a", true},
		{"other namespace", []string{"team-a"}, "team-b", false},
		{"glob", []string{"team-*"}, "team-b", true},
		{"glob of another prefix", []string{"team-*"}, "platform", false},
		{"regular expression", []string{"/^team-[ab]$/"}, "team-b", true},
		{"regular expression not matching", []string{"/^team-[ab]$/"}, "team-c", false},
		{"regular expression found anywhere", []string{"/team/"}, "my-team-ns", true},
		{"lookaround, which RE2 refuses", []string{"/^((?!not).)*$/"}, "allowed", false},
		{"none listed", nil, "team-a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := v1alpha1.NamespaceMatches(tc.patterns, tc.ns)
			if got != tc.want {
				t.Errorf("NamespaceMatches(%q, %q) = %v, want %v", tc.patterns, tc.ns, got, tc.want)
			}
			if denied := appNamespaceDeniedByRule(t, e, tc.patterns, tc.ns); denied == got {
				t.Errorf("app-namespace denies %v, NamespaceMatches permits %v: they disagree", denied, got)
			}
		})
	}
}

// appNamespaceDeniedByRule reports whether app-namespace denies an
// Application in namespace ns of a project of patterns.
func appNamespaceDeniedByRule(t *testing.T, e *Evaluator, patterns []string, ns string) bool {
	t.Helper()
	app := application("shop", "team")
	app["metadata"].(map[string]any)["namespace"] = ns
	proj := appProject("team", "argocd")
	list := make([]any, len(patterns))
	for i, p := range patterns {
		list[i] = p
	}
	proj["spec"].(map[string]any)["sourceNamespaces"] = list
	ins := BuildInputs(InputOptions{Point: PointSync, Projects: []map[string]any{proj}}, []Item{{Object: app}})
	d, err := e.Evaluate(t.Context(), ins[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range d.Violations {
		if v.Rule == "app-namespace" {
			return true
		}
	}
	return false
}
