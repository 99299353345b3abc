package v1alpha1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNamespaceMatches: Argo CD's glob.MatchStringInList with REGEXP, as
// application.namespaces and sourceNamespaces use it.
func TestNamespaceMatches(t *testing.T) {
	for _, tc := range []struct {
		patterns []string
		ns       string
		want     bool
	}{
		{nil, "team-a", false},
		{[]string{"team-a"}, "team-a", true},
		{[]string{"team-a"}, "team-ab", false},
		{[]string{"team-*"}, "team-a", true},
		{[]string{"team-*"}, "other", false},
		{[]string{"*"}, "anything", true},
		{[]string{"team-?"}, "team-b", true},
		{[]string{"team-{a,b}"}, "team-b", true},
		{[]string{"/^team-[0-9]+$/"}, "team-42", true},
		{[]string{"/^team-[0-9]+$/"}, "team-x", false},
		{[]string{"/team/"}, "my-team-ns", true},        // found anywhere, as regexp2's Match
		{[]string{"/^((?!not).)*$/"}, "allowed", false}, // lookaround: RE2 refuses it, matches nothing
		{[]string{"/"}, "/", true},                      // too short to be a regular expression: a glob
		{[]string{"[", "team-a"}, "team-a", true},       // a pattern that does not compile is skipped
	} {
		if got := NamespaceMatches(tc.patterns, tc.ns); got != tc.want {
			t.Errorf("NamespaceMatches(%q, %q) = %v, want %v", tc.patterns, tc.ns, got, tc.want)
		}
	}
}

// TestIsAppNamespacePermitted: the control-plane namespace may use any
// project; elsewhere only a project listing the namespace.
func TestIsAppNamespacePermitted(t *testing.T) {
	proj := &AppProject{Spec: AppProjectSpec{SourceNamespaces: []string{"team-*"}}}
	app := func(ns string) *Application {
		return &Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: ApplicationSpec{Project: "p"}}
	}
	for ns, want := range map[string]bool{"argocd": true, "": true, "team-a": true, "other": false} {
		if got := proj.IsAppNamespacePermitted(app(ns), "argocd"); got != want {
			t.Errorf("namespace %q: permitted %v, want %v", ns, got, want)
		}
	}
	if got := (&AppProject{}).IsAppNamespacePermitted(app("team-a"), "argocd"); got {
		t.Error("a project without sourceNamespaces permits team-a")
	}
	if !NamespaceEnabled("argocd", "argocd", nil) || NamespaceEnabled("team-a", "argocd", nil) || !NamespaceEnabled("team-a", "argocd", []string{"team-*"}) {
		t.Error("NamespaceEnabled: the control-plane namespace always, others by pattern")
	}
	if got := ErrProjectNotPermitted(app("other")).Error(); got != "application 'web' in namespace 'other' is not permitted to use project 'p'" {
		t.Errorf("message %q", got)
	}
}
