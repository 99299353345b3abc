package appset

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/source"
	"github.com/tollgate-dev/tollgate/policies"
)

// GitAccess says which repositories the git generators of one
// ApplicationSet may read. It is decided before anything is read: a
// generator reads a repository only when an AppProject the ApplicationSet
// may name permits it (spec.sourceRepos, judged as the rule
// project-source-denied judges a source), with that project's credentials
// only.
//
//   - With a literal template project P (spec.template.spec.project, and
//     the same in every generator's own template), P must exist, must
//     permit the ApplicationSet's namespace (spec.sourceNamespaces, as the
//     Applications it generates there must, unless it is the control-plane
//     namespace) and must permit the repository. The credentials are
//     those a source of P gets: P's project-scoped repository Secrets or
//     unscoped ones.
//   - A project that depends on parameters ("{{"), or generators' templates
//     that name different projects, cannot be known before reading: some
//     AppProject the ApplicationSet may name (every project from the
//     control-plane namespace; from another namespace, those that list it
//     in spec.sourceNamespaces) must permit the repository, and only
//     unscoped credentials are used, as Argo CD does. Each generated
//     Application is then judged with its own project as any other.
//
// Argo CD checks neither: its git generator reads any repository, with
// the credentials of the literal template project. The controller judges
// the generators whose repoURL is literal before it asks the repo-server
// (CheckGitGenerators); a repoURL rendered from parameters (the second
// generator of a matrix) is judged where it is read (Sources.Permit).
type GitAccess struct {
	// Project is the template's project ("default" when empty); "" when
	// Templated.
	Project string `json:"project,omitempty"`
	// Templated is set when the project depends on parameters.
	Templated bool `json:"templated,omitempty"`
	// Namespace is the ApplicationSet's namespace, for messages.
	Namespace string `json:"namespace,omitempty"`
	// Projects are the AppProjects one of which must permit each
	// repository read, by name and spec.sourceRepos: Project alone, or
	// with Templated every project the ApplicationSet may name.
	Projects []AccessProject `json:"projects,omitempty"`
	// Refusal says why Project permits nothing to this ApplicationSet (it
	// does not exist, or does not permit its namespace); "" when it may.
	Refusal string `json:"refusal,omitempty"`
}

// AccessProject is what GitAccess keeps of an AppProject.
type AccessProject struct {
	Name        string   `json:"name"`
	SourceRepos []string `json:"sourceRepos,omitempty"`
}

// RepositoryDeniedError refuses a git generator's repository before it is
// read. Its message names the generator, the repository and the project,
// and never anything read.
type RepositoryDeniedError struct {
	// Field is the generator, e.g. spec.generators[0].git.
	Field string
	// RepoURL is the repository, credentials removed.
	RepoURL string
	// Project is the template's project; "" when it depends on parameters.
	Project string
	// Refusal, when set, says why the project permits nothing.
	Refusal string
}

func (e *RepositoryDeniedError) Error() string {
	switch {
	case e.Refusal != "":
		return fmt.Sprintf("%s reads repository %q for AppProject %q, which %s; nothing was read", e.Field, e.RepoURL, e.Project, e.Refusal)
	case e.Project != "":
		return fmt.Sprintf("%s reads repository %q, which AppProject %q does not permit; nothing was read: use a repository listed in the project's spec.sourceRepos or add this one there", e.Field, e.RepoURL, e.Project)
	}
	return fmt.Sprintf("%s reads repository %q, which no AppProject this ApplicationSet may name permits (its template's project depends on parameters); nothing was read: use a repository listed in the spec.sourceRepos of the projects it generates for", e.Field, e.RepoURL)
}

// NewGitAccess decides what the git generators of set may read, among
// projects, the AppProjects of controlNamespace (the control-plane
// namespace, where an ApplicationSet may name every project): with a
// literal template project, that project (projects may hold it alone),
// otherwise every project. It reads nothing.
func NewGitAccess(ctx context.Context, set *v1alpha1.ApplicationSet, controlNamespace string, projects []v1alpha1.AppProject) (*GitAccess, error) {
	a := &GitAccess{Namespace: set.Namespace}
	a.Project, a.Templated = TemplateProject(set)
	found := false
	for i := range projects {
		p := &projects[i]
		if !a.Templated && p.Name != a.Project {
			continue
		}
		found = true
		ok, err := namespacePermitted(ctx, p, set.Namespace, controlNamespace)
		if err != nil {
			return nil, err
		}
		switch {
		case ok:
			a.Projects = append(a.Projects, AccessProject{Name: p.Name, SourceRepos: p.Spec.SourceRepos})
		case !a.Templated:
			a.Refusal = fmt.Sprintf("does not permit the ApplicationSets and Applications of namespace %q (spec.sourceNamespaces)", set.Namespace)
		}
	}
	if !a.Templated && !found {
		a.Refusal = "does not exist"
	}
	return a, nil
}

// namespacePermitted reports whether p may be named by the
// ApplicationSets of namespace, as the Applications they generate there
// must be permitted (app-namespace).
func namespacePermitted(ctx context.Context, p *v1alpha1.AppProject, namespace, controlNamespace string) (bool, error) {
	if namespace == "" || namespace == controlNamespace {
		return true, nil
	}
	return policies.AppNamespacePermitted(ctx, p.Spec.SourceNamespaces, namespace)
}

// TemplateProject returns the project the Applications of set are
// generated for when it can be known before generating ("default" when
// the template leaves it empty), or templated true when it depends on
// parameters or generators' own templates name different projects.
func TemplateProject(set *v1alpha1.ApplicationSet) (project string, templated bool) {
	base := set.Spec.Template.Spec.Project
	// A project a generator's own template sets wins over the
	// ApplicationSet's (mergeTemplate).
	effective := map[string]bool{}
	for _, gen := range set.Spec.Generators {
		raw, err := toMap(gen)
		if err != nil {
			return "", true
		}
		spec, _ := generatorTemplate(raw)["spec"].(map[string]any)
		p, _ := spec["project"].(string)
		effective[cmp.Or(p, base)] = true
	}
	if len(effective) > 1 {
		return "", true
	}
	project = base
	for p := range effective {
		project = p
	}
	if strings.Contains(project, "{{") {
		return "", true
	}
	if project == "" {
		project = "default"
	}
	return project, false
}

// Check returns nil when a permits the git generator at field to read
// repoURL, else a *RepositoryDeniedError.
func (a *GitAccess) Check(ctx context.Context, field, repoURL string) error {
	denied := &RepositoryDeniedError{Field: field, RepoURL: source.RedactURL(repoURL), Project: a.Project, Refusal: a.Refusal}
	if a.Refusal != "" {
		return denied
	}
	for _, p := range a.Projects {
		ok, err := policies.SourcePermitted(ctx, p.SourceRepos, repoURL)
		if err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		if ok {
			return nil
		}
	}
	return denied
}

// CheckGitGenerators checks, with a, every git generator of set whose
// repoURL is literal, nested ones included, and returns the first
// refusal: what can be judged before anything is read. A repoURL that
// depends on parameters is judged when it is read (Sources.Permit).
func CheckGitGenerators(ctx context.Context, set *v1alpha1.ApplicationSet, a *GitAccess) error {
	var first error
	WalkGenerators(set, func(field, kind string, g map[string]any) {
		repoURL, _ := g["repoURL"].(string)
		if first != nil || kind != "git" || strings.Contains(repoURL, "{{") {
			return
		}
		first = a.Check(ctx, field, repoURL)
	})
	return first
}

// WalkGenerators calls fn with every generator of set, nested matrix and
// merge children included, as decoded JSON, in order: field is its path
// with its kind (spec.generators[0].matrix.generators[1].git), as
// generation errors name it.
func WalkGenerators(set *v1alpha1.ApplicationSet, fn func(field, kind string, g map[string]any)) {
	b, err := json.Marshal(set.Spec.Generators)
	if err != nil {
		return
	}
	var gens []any
	if json.Unmarshal(b, &gens) != nil {
		return
	}
	var walk func(prefix string, gens []any)
	walk = func(prefix string, gens []any) {
		for i, g := range gens {
			m, _ := g.(map[string]any)
			for _, kind := range generatorKinds {
				body, _ := m[kind].(map[string]any)
				if body == nil {
					continue
				}
				field := fmt.Sprintf("%s[%d].%s", prefix, i, kind)
				fn(field, kind, body)
				if children, ok := body["generators"].([]any); ok && (kind == "matrix" || kind == "merge") {
					walk(field+".generators", children)
				}
			}
		}
	}
	walk("spec.generators", gens)
}
