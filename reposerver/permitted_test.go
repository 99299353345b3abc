package reposerver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRepositoryPermitted: a Helm repository is permitted as a source is;
// an OCI registry by either of its names, unless a "!" pattern rejects
// either.
func TestRepositoryPermitted(t *testing.T) {
	for _, tt := range []struct {
		name        string
		sourceRepos []string
		repoURL     string
		oci         bool
		want        bool
	}{
		{"listed", []string{"https://charts.example.com/stable"}, "https://charts.example.com/stable", false, true},
		{"glob", []string{"https://charts.example.com/*"}, "https://Charts.example.com/stable", false, true},
		{"not listed", []string{"https://github.com/org/*"}, "https://charts.example.com/stable", false, false},
		{"no sourceRepos", nil, "https://charts.example.com/stable", false, false},
		{"star", []string{"*"}, "https://charts.example.com/stable", false, true},
		{"rejected", []string{"*", "!https://charts.example.com/*"}, "https://charts.example.com/stable", false, false},
		{"oci:// listed without the scheme", []string{"registry.example.com/charts"}, "oci://registry.example.com/charts", true, true},
		{"enableOCI listed with the scheme", []string{"oci://registry.example.com/charts"}, "registry.example.com/charts", true, true},
		{"oci:// rejected without the scheme", []string{"*", "!registry.example.com/evil"}, "oci://registry.example.com/evil", true, false},
		{"oci:// rejected with the scheme", []string{"registry.example.com/*", "!oci://registry.example.com/evil"}, "registry.example.com/evil", true, false},
		{"a Helm repository has one name", []string{"charts.example.com/stable"}, "https://charts.example.com/stable", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RepositoryPermitted(t.Context(), tt.sourceRepos, tt.repoURL, tt.oci)
			if err != nil || got != tt.want {
				t.Errorf("RepositoryPermitted(%q, %s, oci %v) = %v, %v; want %v", tt.sourceRepos, tt.repoURL, tt.oci, got, err, tt.want)
			}
		})
	}
}

// TestPermittedRepositories: only the Secrets of repositories the project
// permits are sent, and the repo-creds templates that serve them.
func TestPermittedRepositories(t *testing.T) {
	repos := []HelmRepository{
		{URL: "https://charts.example.com/team-a"},
		{URL: "https://charts.example.com/team-b"},
		{URL: "https://charts.example.com/team-a/extra/"},
		{URL: "https://charts.example.com", Template: true},
		{URL: "https://other.example.com", Template: true},
		{URL: "registry.example.com", EnableOCI: true, Template: true},
		{URL: "registry.example.com/team-a", EnableOCI: true},
	}
	sourceRepos := []string{"https://github.com/org/*", "https://charts.example.com/team-a", "https://charts.example.com/team-a/extra", "oci://registry.example.com/team-a"}
	got, err := PermittedRepositories(t.Context(), repos, sourceRepos)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, r := range got {
		urls = append(urls, r.URL)
	}
	want := []string{"https://charts.example.com/team-a", "https://charts.example.com/team-a/extra/", "https://charts.example.com", "registry.example.com", "registry.example.com/team-a"}
	if d := cmp.Diff(want, urls); d != "" {
		t.Errorf("permitted repositories (-want +got):\n%s", d)
	}
}
