package ui

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestProjectPageShowsDescription: the project page shows the AppProject's
// spec.description above its limits, as Argo CD's UI does (escaped: it is
// text, not HTML).
func TestProjectPageShowsDescription(t *testing.T) {
	set, err := parseTemplates()
	if err != nil {
		t.Fatal(err)
	}
	proj := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "team-web", Namespace: "argocd"},
		Spec:       v1alpha1.AppProjectSpec{Description: "The web team's <services>", SourceRepos: []string{"*"}},
	}
	var b strings.Builder
	v := view{Title: "Project " + proj.Name, Data: map[string]any{"Project": proj, "Words": describeProject(proj)}}
	if err := set["project"].ExecuteTemplate(&b, "main", v); err != nil {
		t.Fatal(err)
	}
	if want := "<h1>Project team-web</h1>\n<p>The web team&#39;s &lt;services&gt;</p>"; !strings.Contains(b.String(), want) {
		t.Errorf("project page lacks %q:\n%s", want, b.String())
	}
}
