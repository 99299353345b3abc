package appset

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
)

const (
	configRepo  = "https://git.example.com/config.git"
	privateRepo = "https://git.example.com/platform/secrets.git"
)

// accessProject is an AppProject of the control namespace argocd.
func accessProject(name string, repos, namespaces []string) v1alpha1.AppProject {
	return v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd"},
		Spec:       v1alpha1.AppProjectSpec{SourceRepos: repos, SourceNamespaces: namespaces},
	}
}

// gitSet is an ApplicationSet of namespace ns whose git files generator
// reads repoURL, for project.
func gitSet(t *testing.T, ns, repoURL, project string) *v1alpha1.ApplicationSet {
	t.Helper()
	set := decodeSet(t, `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: team-a, namespace: `+ns+`}
spec:
  generators:
  - matrix:
      generators:
      - list: {elements: [{env: dev}]}
      - git: {repoURL: '`+repoURL+`', revision: HEAD, files: [{path: 'teams/*/config.json'}]}
  template:
    metadata: {name: '{{team}}-{{env}}'}
    spec:
      project: '`+project+`'
      source: {repoURL: '`+configRepo+`', path: apps}
      destination: {server: https://kubernetes.default.svc, namespace: '{{team}}'}
`)
	return set
}

// TestCheckGitGenerators: a git generator's repository must be permitted
// by the template's project, which must exist and permit the
// ApplicationSet's namespace; with a templated project, by some project
// the ApplicationSet may name. A refusal names the generator, the
// repository and the project.
func TestCheckGitGenerators(t *testing.T) {
	teamA := accessProject("team-a", []string{configRepo}, []string{"team-a"})
	platform := accessProject("platform", []string{"https://git.example.com/platform/*"}, nil)
	projects := []v1alpha1.AppProject{teamA, platform}
	const field = "spec.generators[0].matrix.generators[1].git"
	tests := []struct {
		name               string
		ns, repo, project  string
		want               string
		wantProject        string
		wantAccessProjects []string
	}{{
		name: "the project permits the repository", ns: "team-a", repo: configRepo, project: "team-a",
		wantProject: "team-a", wantAccessProjects: []string{"team-a"},
	}, {
		name: "the project does not permit the repository", ns: "team-a", repo: privateRepo, project: "team-a",
		want:        field + ` reads repository "` + privateRepo + `", which AppProject "team-a" does not permit; nothing was read: use a repository listed in the project's spec.sourceRepos or add this one there`,
		wantProject: "team-a", wantAccessProjects: []string{"team-a"},
	}, {
		name: "another project's, not permitting the namespace", ns: "team-a", repo: privateRepo, project: "platform",
		want:        field + ` reads repository "` + privateRepo + `" for AppProject "platform", which does not permit the ApplicationSets and Applications of namespace "team-a" (spec.sourceNamespaces); nothing was read`,
		wantProject: "platform",
	}, {
		name: "the control namespace may name every project", ns: "argocd", repo: privateRepo, project: "platform",
		wantProject: "platform", wantAccessProjects: []string{"platform"},
	}, {
		name: "a project that does not exist", ns: "argocd", repo: configRepo, project: "nope",
		want:        field + ` reads repository "` + configRepo + `" for AppProject "nope", which does not exist; nothing was read`,
		wantProject: "nope",
	}, {
		name: "a templated project: some project the namespace may name permits it", ns: "team-a", repo: configRepo, project: "{{team}}",
		wantAccessProjects: []string{"team-a"},
	}, {
		name: "a templated project: no project the namespace may name permits it", ns: "team-a", repo: privateRepo, project: "{{team}}",
		want:               field + ` reads repository "` + privateRepo + `", which no AppProject this ApplicationSet may name permits (its template's project depends on parameters); nothing was read`,
		wantAccessProjects: []string{"team-a"},
	}, {
		name: "a templated project in the control namespace", ns: "argocd", repo: privateRepo, project: "{{team}}",
		wantAccessProjects: []string{"team-a", "platform"},
	}, {
		name: "a password in the URL is not repeated", ns: "team-a", repo: "https://user:s3cret@git.example.com/platform/secrets.git", project: "team-a",
		want:        field + ` reads repository "https://user:redacted@git.example.com/platform/secrets.git", which AppProject "team-a" does not permit`,
		wantProject: "team-a", wantAccessProjects: []string{"team-a"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := gitSet(t, tt.ns, tt.repo, tt.project)
			a := reposerver.NewGitAccess(set, "argocd", projects)
			var names []string
			for _, p := range a.Projects {
				names = append(names, p.Name)
			}
			if a.Project != tt.wantProject || !cmp.Equal(names, tt.wantAccessProjects) {
				t.Errorf("access project %q through %v, want %q through %v", a.Project, names, tt.wantProject, tt.wantAccessProjects)
			}
			err := reposerver.CheckGitGenerators(t.Context(), set, a)
			var denied *reposerver.RepositoryDeniedError
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (!errors.As(err, &denied) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// TestTemplateProject: the project is known before generating when the
// ApplicationSet's template and the generators' own templates name one
// literal project.
func TestTemplateProject(t *testing.T) {
	tests := []struct {
		name, manifest string
		want           string
		templated      bool
	}{
		{"literal", `{generators: [{list: {elements: []}}], template: {spec: {project: team-a}}}`, "team-a", false},
		{"empty is default", `{generators: [{list: {elements: []}}], template: {spec: {}}}`, "default", false},
		{"templated", `{generators: [{list: {elements: []}}], template: {spec: {project: '{{team}}'}}}`, "", true},
		{"a generator's template names the same", `{generators: [{list: {elements: [], template: {spec: {project: team-a}}}}], template: {spec: {project: team-a}}}`, "team-a", false},
		{"a generator's template sets it", `{generators: [{list: {elements: [], template: {spec: {project: team-a}}}}], template: {spec: {}}}`, "team-a", false},
		{"generators' templates name two", `{generators: [{list: {elements: [], template: {spec: {project: platform}}}}, {list: {elements: []}}], template: {spec: {project: team-a}}}`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := decodeSet(t, "spec: "+tt.manifest)
			got, templated := set.TemplateProject()
			if got != tt.want || templated != tt.templated {
				t.Errorf("TemplateProject = %q, %v; want %q, %v", got, templated, tt.want, tt.templated)
			}
		})
	}
}

// countingRepo counts checkouts.
type countingRepo struct {
	dirRepo
	n *int
}

func (c countingRepo) Checkout(ctx context.Context, repoURL, revision string) (string, error) {
	*c.n++
	return c.dirRepo.Checkout(ctx, repoURL, revision)
}

// TestGeneratePermit: Sources.Permit is asked with the rendered repoURL
// before a git generator reads, and its refusal ends the generation with
// nothing read; the Applications of git files generators name their
// files, through a matrix too, and those of lists name none.
func TestGeneratePermit(t *testing.T) {
	checkout := repo(t, map[string]string{"teams/red/config.json": `{"team": "red", "token": "s3cret"}`})
	n := 0
	var asked []string
	src := Sources{Git: countingRepo{checkout, &n}, Permit: func(_ context.Context, field, repoURL string) error {
		asked = append(asked, field+" "+repoURL)
		if repoURL != configRepo {
			return errors.New("refused")
		}
		return nil
	}}
	set := decodeSet(t, header+`  generators:
  - matrix:
      generators:
      - list: {elements: [{repo: '`+configRepo+`'}]}
      - git: {repoURL: '{{repo}}', revision: HEAD, files: [{path: 'teams/*/config.json'}]}
  - list: {elements: [{team: blue}]}
  template:
    metadata: {name: '{{team}}'}
    spec: {project: default, destination: {}}
`)
	gen, err := Generate(t.Context(), set, src)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"spec.generators[0].matrix.generators[1].git " + configRepo}; !cmp.Equal(asked, want) {
		t.Errorf("asked %v, want %v", asked, want)
	}
	var files [][]reposerver.ParamFile
	for _, g := range gen {
		files = append(files, g.Files)
	}
	if want := [][]reposerver.ParamFile{{{RepoURL: configRepo, Path: "teams/red/config.json"}}, nil}; !cmp.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}

	set.Spec.Generators[0].Matrix = nil
	set.Spec.Generators[0].Git = &v1alpha1.GitGenerator{RepoURL: privateRepo, Files: []v1alpha1.GitFileGeneratorItem{{Path: "*"}}}
	n = 0
	if _, err := Generate(t.Context(), set, src); err == nil || n != 0 {
		t.Errorf("refused repository: error %v after %d checkouts, want the refusal and none", err, n)
	}
}
