package policies

import (
	"testing"
)

// TestSourcePermitted: SourcePermitted answers as project-source-denied
// judges a source (normalization, "*" stopping at "/", "!" patterns), and
// agrees with the rule on an Application.
func TestSourcePermitted(t *testing.T) {
	e, err := New(t.Context(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		patterns []string
		repo     string
		want     bool
	}{
		{"listed", []string{"https://github.com/org/shop.git"}, "https://github.com/org/shop.git", true},
		{"normalized alike", []string{"https://GitHub.com/org/shop"}, "https://github.com/org/shop.git", true},
		{"scp form equals ssh://", []string{"ssh://git@github.com/org/shop.git"}, "git@github.com:org/shop", true},
		{"star stops at slash", []string{"https://github.com/org/*"}, "https://github.com/org/team/shop", false},
		{"double star", []string{"https://github.com/org/**"}, "https://github.com/org/team/shop", true},
		{"star alone", []string{"*"}, "https://anything.example/x", true},
		{"other repository", []string{"https://github.com/org/shop"}, "https://github.com/org/private", false},
		{"other host with the same path", []string{"https://github.com/org/shop"}, "https://github.com.evil.example/org/shop", false},
		{"deny pattern alone permits nothing", []string{"!https://github.com/evil/*"}, "https://github.com/org/shop", false},
		{"deny pattern rejects", []string{"*", "!https://github.com/evil/*"}, "https://github.com/evil/tool", false},
		{"no patterns", nil, "https://github.com/org/shop", false},
		{"empty URL", []string{"*"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SourcePermitted(t.Context(), tc.patterns, tc.repo)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("SourcePermitted(%q, %q) = %v, want %v", tc.patterns, tc.repo, got, tc.want)
			}
			if tc.repo == "" {
				return
			}
			if denied := sourceDeniedByRule(t, e, tc.patterns, tc.repo); denied == got {
				t.Errorf("project-source-denied denies %v, SourcePermitted permits %v: they disagree", denied, got)
			}
		})
	}
}

// sourceDeniedByRule reports whether project-source-denied denies an
// Application of repo in a project of patterns.
func sourceDeniedByRule(t *testing.T, e *Evaluator, patterns []string, repo string) bool {
	t.Helper()
	app := application("shop", "team")
	app["spec"].(map[string]any)["source"] = map[string]any{"repoURL": repo, "path": "."}
	proj := appProject("team", "argocd")
	repos := make([]any, len(patterns))
	for i, p := range patterns {
		repos[i] = p
	}
	proj["spec"] = map[string]any{"sourceRepos": repos, "destinations": []any{map[string]any{"server": "*", "namespace": "*"}}}
	ins := BuildInputs(InputOptions{Point: PointSync, Projects: []map[string]any{proj}}, []Item{{Object: app}})
	d, err := e.Evaluate(t.Context(), ins[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range d.Violations {
		if v.Rule == "project-source-denied" {
			return true
		}
	}
	return false
}
