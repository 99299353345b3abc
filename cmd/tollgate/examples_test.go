package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The examples guarded here are the ones hack/demo.sh shows.
const (
	examplesDir    = "../../examples"
	exampleRepoURL = "https://github.com/tollgate-dev/example-config.git"
)

// deniedRules returns the sorted rule ids denied in a json report.
func deniedRules(t *testing.T, stdout string) []string {
	t.Helper()
	var r struct {
		Results []struct {
			Violations []struct {
				Rule     string `json:"rule"`
				Severity string `json:"severity"`
			} `json:"violations"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("decode json report: %v\n%s", err, stdout)
	}
	var rules []string
	for _, res := range r.Results {
		for _, v := range res.Violations {
			if v.Severity == "deny" && !slices.Contains(rules, v.Rule) {
				rules = append(rules, v.Rule)
			}
		}
	}
	slices.Sort(rules)
	return rules
}

func TestExampleConfigRepoIsClean(t *testing.T) {
	repo := filepath.Join(examplesDir, "config-repo")
	r := runCLI(t, nil, "test", "--fail-on-warn", "--repo-url", exampleRepoURL, "--repo-root", repo, repo)
	if r.code != exitOK {
		t.Fatalf("exit code = %d, want 0 (error %q)\n%s%s", r.code, r.err, r.stdout, r.stderr)
	}
	if r.stderr != "" {
		t.Errorf("notes = %q, want none: every Application should render", r.stderr)
	}
	// Every Application renders from the checkout: the report holds what
	// each one deploys, in its context.
	r = runCLI(t, nil, "test", "-o", "json", "--repo-url", exampleRepoURL, "--repo-root", repo, repo)
	apps := map[string]bool{}
	for _, row := range resultRows(t, r.stdout) {
		_, app, _ := strings.Cut(row, " app=")
		if app != "" {
			apps[app] = true
		}
	}
	want := map[string]bool{"guestbook-dev": true, "guestbook-prod": true, "podinfo": true, "billing": true}
	if diff := cmp.Diff(want, apps); diff != "" {
		t.Errorf("rendered Applications mismatch (-want +got):\n%s", diff)
	}
}

func TestExampleBadCases(t *testing.T) {
	project := filepath.Join(examplesDir, "config-repo", "argocd", "projects", "team-web.yaml")
	cases, err := os.ReadDir(filepath.Join(examplesDir, "bad"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 7 {
		t.Fatalf("found %d bad cases, want at least 7", len(cases))
	}
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			dir := filepath.Join(examplesDir, "bad", c.Name())
			data, err := os.ReadFile(filepath.Join(dir, "CASE"))
			if err != nil {
				t.Fatal(err)
			}
			// The first line: the rules the case is denied by, sorted and
			// comma-separated.
			want := strings.Split(strings.TrimSpace(strings.SplitN(string(data), "\n", 2)[0]), ",")
			r := runCLI(t, nil, "test", "-o", "json", "--repo-url", exampleRepoURL,
				"--repo-root", dir, "--project", project, dir)
			if r.code != exitDenied {
				t.Fatalf("exit code = %d, want %d (error %q)", r.code, exitDenied, r.err)
			}
			if diff := cmp.Diff(want, deniedRules(t, r.stdout)); diff != "" {
				t.Errorf("denied rules mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
