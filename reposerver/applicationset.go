package reposerver

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
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
func NewGitAccess(set *v1alpha1.ApplicationSet, controlNamespace string, projects []v1alpha1.AppProject) *GitAccess {
	a := &GitAccess{Namespace: set.Namespace}
	a.Project, a.Templated = set.TemplateProject()
	found := false
	for i := range projects {
		p := &projects[i]
		if !a.Templated && p.Name != a.Project {
			continue
		}
		found = true
		switch {
		case p.PermitsNamespace(set.Namespace, controlNamespace):
			a.Projects = append(a.Projects, AccessProject{Name: p.Name, SourceRepos: p.Spec.SourceRepos})
		case !a.Templated:
			a.Refusal = fmt.Sprintf("does not permit the ApplicationSets and Applications of namespace %q (spec.sourceNamespaces)", set.Namespace)
		}
	}
	if !a.Templated && !found {
		a.Refusal = "does not exist"
	}
	return a
}

// Check returns nil when a permits the git generator at field to read
// repoURL, else a *RepositoryDeniedError.
func (a *GitAccess) Check(ctx context.Context, field, repoURL string) error {
	denied := &RepositoryDeniedError{Field: field, RepoURL: RedactURL(repoURL), Project: a.Project, Refusal: a.Refusal}
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
	set.WalkGenerators(func(field, kind string, g map[string]any) {
		repoURL, _ := g["repoURL"].(string)
		if first != nil || kind != "git" || strings.Contains(repoURL, "{{") {
			return
		}
		first = a.Check(ctx, field, repoURL)
	})
	return first
}

// Generated is one Application an ApplicationSet generates.
type Generated struct {
	// Application is the rendered Application, as a decoded JSON object
	// (apiVersion argoproj.io/v1alpha1, kind Application).
	Application map[string]any `json:"application"`
	// Params are the parameters that rendered it.
	Params map[string]any `json:"params,omitempty"`
	// Generator is the field of the top-level generator that produced it,
	// e.g. "spec.generators[0]".
	Generator string `json:"generator"`
	// Files are the files of git files generators whose content is in
	// Params: a message about the Application names them rather than
	// quoting Params.
	Files []ParamFile `json:"files,omitempty"`
}

// ParamFile is a file a git files generator read parameters from.
type ParamFile struct {
	RepoURL string `json:"repoURL"`
	Path    string `json:"path"`
}

// WithoutDuplicates returns the Applications of gen whose names no earlier
// one of gen has, and an error per later one, as Argo CD validates an
// ApplicationSet's Applications: the first of a name is created, the
// others are refused (ApplicationValidationError).
func WithoutDuplicates(setName string, gen []Generated) ([]Generated, []error) {
	seen := map[string]bool{}
	var valid []Generated
	var errs []error
	for _, g := range gen {
		md, _ := g.Application["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		if seen[name] {
			errs = append(errs, fmt.Errorf("ApplicationSet %s contains applications with duplicate name: %s", setName, name))
			continue
		}
		seen[name] = true
		valid = append(valid, g)
	}
	return valid, errs
}

// Argo CD's cluster Secrets.
const (
	// SecretTypeLabel marks Argo CD's Secrets by type.
	SecretTypeLabel = "argocd.argoproj.io/secret-type"
	// SecretTypeCluster is the SecretTypeLabel value of a cluster.
	SecretTypeCluster = "cluster"
	// SecretTypeSCMCreds is the SecretTypeLabel value a Secret must have
	// for an SCM generator's tokenRef to read it (Argo CD's strict token
	// mode, always on in tollgate).
	SecretTypeSCMCreds = "scm-creds"
	// InClusterServer and InClusterName are the cluster the controller
	// runs in.
	InClusterServer = "https://kubernetes.default.svc"
	InClusterName   = "in-cluster"
	// LastAppliedAnnotation is kubectl's record of a client-side apply:
	// the whole object as applied, a Secret's data (its bearer token)
	// included. It is never a parameter.
	LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
)

// clusterKeys are the data keys of a cluster Secret a clusters generator
// reads; the rest (its credentials) never leaves the controller.
var clusterKeys = []string{"name", "server", "project"}

// ClusterSecretsForGeneration returns the Argo CD cluster Secrets among
// secrets as clusters generators may see them: name, namespace, labels,
// the annotations but LastAppliedAnnotation, and the data keys name,
// server and project (from data, or stringData as a manifest in Git may
// carry them); nothing else, so that no credential leaves the controller
// or the CLI for the repo-server, a parameter or an output.
func ClusterSecretsForGeneration(secrets []corev1.Secret) []corev1.Secret {
	var out []corev1.Secret
	for _, s := range secrets {
		if s.Labels[SecretTypeLabel] != SecretTypeCluster {
			continue
		}
		c := corev1.Secret{}
		c.Name, c.Namespace, c.Labels, c.Annotations = s.Name, s.Namespace, s.Labels, ClusterAnnotations(s.Annotations)
		c.Data = map[string][]byte{}
		for _, k := range clusterKeys {
			if v, ok := s.Data[k]; ok {
				c.Data[k] = v
			} else if v, ok := s.StringData[k]; ok {
				c.Data[k] = []byte(v)
			}
		}
		out = append(out, c)
	}
	return out
}

// ClusterAnnotations returns a cluster Secret's annotations without
// LastAppliedAnnotation (a copy when it was there): Argo CD passes that
// one on, tollgate does not, as it holds the Secret's data.
func ClusterAnnotations(m map[string]string) map[string]string {
	if _, ok := m[LastAppliedAnnotation]; !ok {
		return m
	}
	out := maps.Clone(m)
	delete(out, LastAppliedAnnotation)
	return out
}

// ApplicationSetsPath is where a repo-server answers GenerateApplications
// requests.
const ApplicationSetsPath = "/v1/applicationsets"

// AppSetRequest asks for the Applications of one ApplicationSet. Its git
// generators read tenant repositories and its templates are tenant input:
// both are parsed here, never in the controller, as Argo CD's
// ApplicationSet controller asks its repo-server for a repository's
// directories and files.
type AppSetRequest struct {
	ApplicationSet v1alpha1.ApplicationSet `json:"applicationSet"`
	// Clusters are the Argo CD cluster Secrets of the control namespace
	// for clusters generators, with nothing of their data but the name,
	// server and project (ClusterSecretsForGeneration).
	Clusters []corev1.Secret `json:"clusters,omitempty"`
	// Credentials of the git generators' repositories, by
	// NormalizeURL of their URL: only those of repositories Access
	// permits, matched for its project.
	Credentials map[string]Credentials `json:"credentials,omitempty"`
	// Access is what the git generators may read, decided by the
	// controller (NewGitAccess); every repository is checked with
	// it again before it is read, a repoURL rendered from parameters
	// included. Without it no git generator reads anything.
	Access *GitAccess `json:"access,omitempty"`
	// ListingMaxAge is how old a repository's reference listing may be to
	// resolve a revision; zero asks the Git server every time (a refresh).
	ListingMaxAge time.Duration `json:"listingMaxAge,omitempty"`
	// SCM is what the pull request and SCM provider generators may ask
	// providers' APIs with; without it they are refused.
	SCM *SCMAccess `json:"scm,omitempty"`
	// Plugins are the generator plugins the plugin generators name, as
	// the controller read their ConfigMaps and tokens.
	Plugins []PluginAccess `json:"plugins,omitempty"`
	// Decisions are what the clusterDecisionResource generators read, by
	// the generator's field (e.g. spec.generators[0].clusterDecisionResource).
	Decisions map[string]ClusterDecisions `json:"decisions,omitempty"`
}

// PluginAccess is a generator plugin as its ConfigMap (in the
// control-plane namespace) and token Secret describe it.
type PluginAccess struct {
	ConfigMapName string `json:"configMapName"`
	BaseURL       string `json:"baseUrl"`
	Token         string `json:"token"`
	// RequestTimeout bounds a call; zero is 30 seconds, as in Argo CD.
	RequestTimeout time.Duration `json:"requestTimeout,omitempty"`
}

// ClusterDecisions are what a clusterDecisionResource generator read: the
// entries of its resources' status list, each value printed with %v, and
// the key of an entry that names a cluster.
type ClusterDecisions struct {
	MatchKey  string              `json:"matchKey"`
	Decisions []map[string]string `json:"decisions"`
}

// AppSetResponse is what an ApplicationSet generated.
type AppSetResponse struct {
	Applications []Generated `json:"applications"`
}

// AppSetGenerator generates the Applications of ApplicationSets; Service
// and Client implement it.
type AppSetGenerator interface {
	GenerateApplications(ctx context.Context, req *AppSetRequest) (*AppSetResponse, error)
}

// SecretValue is the value of key in an Argo CD Secret (repository,
// repo-creds, cluster): Data, falling back to StringData for a Secret that
// has not been through the API server (a manifest in Git).
func SecretValue(s *corev1.Secret, key string) string {
	if v, ok := s.Data[key]; ok {
		return string(v)
	}
	return s.StringData[key]
}
