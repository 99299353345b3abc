package check

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/bounded"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/policies/report"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/appset"
	"github.com/tollgate-dev/tollgate/reposerver/render"
)

// AppSetOptions say where the generators of ApplicationSets read from
// outside the controller.
type AppSetOptions struct {
	// RepoRoot is the checkout git generators read for the repository
	// under test; "" means ".".
	RepoRoot string
	// RepoURL is the URL of the repository under test; "" means the origin
	// remote of the Git repository containing RepoRoot.
	RepoURL string
	// ClusterFiles hold Argo CD cluster Secrets for clusters generators.
	ClusterFiles []string
	// ProjectFiles hold AppProjects which, with those of the file, judge
	// git generators as the controller does (appSetProjects).
	ProjectFiles []string
	// ArgoCDNamespace is the namespace Argo CD runs in; "" means "argocd".
	ArgoCDNamespace string
	// Renderer generates each ApplicationSet, such as a *server.Runner
	// that generates in a child process under limits; nil generates in
	// process.
	Renderer Renderer
}

// GeneratedSet is the outcome of one ApplicationSet of a file.
type GeneratedSet struct {
	// Name is the ApplicationSet's metadata.name.
	Name string
	// File, Index and Line locate its document.
	File        string
	Index, Line int
	// Applications are the generated Applications.
	Applications []reposerver.Generated
}

// GenerateApplicationSets generates the Applications of every
// ApplicationSet in file as the controller would: git generators read the
// checkout at o.RepoRoot when their repository is the one under test (and
// are refused otherwise: there is nothing else to read), clusters
// generators the cluster Secrets of o.ClusterFiles. Errors name the file,
// the ApplicationSet and the field.
func GenerateApplicationSets(ctx context.Context, file string, o AppSetOptions) ([]GeneratedSet, error) {
	lim := render.DefaultLimits()
	docs, err := decodePath(file, lim)
	if err != nil {
		return nil, err
	}
	src, err := appSetSources(o, lim)
	if err != nil {
		return nil, err
	}
	projects, err := loadProjects(o.ProjectFiles, lim)
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		if isKind(d.Object, v1alpha1.Group, v1alpha1.AppProjectKind) {
			projects = append(projects, d.Object)
		}
	}
	known, err := newAppSetProjects(o.ArgoCDNamespace, projects)
	if err != nil {
		return nil, err
	}
	var out []GeneratedSet
	for _, d := range docs {
		if !isKind(d.Object, v1alpha1.Group, v1alpha1.ApplicationSetKind) {
			continue
		}
		where := location(file, d.Line)
		set, gen, refused, err := generateSet(ctx, generator(o.Renderer), d.Object, src, known)
		switch {
		case set == nil:
			return nil, fmt.Errorf("%s: ApplicationSet: %w", where, err)
		case err != nil:
			return nil, fmt.Errorf("%s: ApplicationSet %q: %w", where, set.Name, err)
		case len(refused) > 0:
			return nil, fmt.Errorf("%s: %w", where, errors.Join(refused...))
		}
		out = append(out, GeneratedSet{Name: set.Name, File: file, Index: d.Index, Line: d.Line, Applications: gen})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no ApplicationSet", file)
	}
	return out, nil
}

// generateSet decodes one ApplicationSet document (set is nil when it does
// not decode) and generates the Applications the controller would create,
// its git generators judged with known; refused has an error for each
// later Application of a name an earlier one has, as Argo CD validates
// them.
func generateSet(ctx context.Context, generate generateFunc, obj map[string]any, src appset.Sources, known appSetProjects) (set *v1alpha1.ApplicationSet, gen []reposerver.Generated, refused []error, err error) {
	if set, err = decodeApplicationSet(obj); err != nil {
		return nil, nil, nil, err
	}
	src.Permit = known.permit(set)
	if gen, err = generate(ctx, set, src); err != nil {
		return set, nil, nil, err
	}
	gen, refused = reposerver.WithoutDuplicates(set.Name, gen)
	return set, gen, refused, nil
}

// appSetProjects are the AppProjects known outside the controller (the
// --project files, and those among the files checked), by which `tollgate
// test` and `tollgate appset generate` judge git generators as the
// controller does (reposerver.GitAccess), when they can.
type appSetProjects struct {
	// namespace is the Argo CD namespace.
	namespace string
	projects  []v1alpha1.AppProject
}

// newAppSetProjects decodes the AppProjects objs of the Argo CD namespace
// namespace ("" is "argocd"; an AppProject without a namespace is taken to
// be there).
func newAppSetProjects(namespace string, objs []map[string]any) (appSetProjects, error) {
	k := appSetProjects{namespace: cmp.Or(namespace, policies.DefaultArgoCDNamespace)}
	for _, obj := range objs {
		var p v1alpha1.AppProject
		b, err := json.Marshal(obj)
		if err == nil {
			err = json.Unmarshal(b, &p)
		}
		if err != nil {
			return appSetProjects{}, fmt.Errorf("AppProject %v: %w", obj["metadata"], err)
		}
		if p.Namespace == "" || p.Namespace == k.namespace {
			k.projects = append(k.projects, p)
		}
	}
	return k, nil
}

// permit returns the Sources.Permit of set: the controller's check when
// its template names a project known here; nil (no check) when the
// project depends on parameters or is not known, since nothing then says
// what it permits (the checkout under test is the only repository read
// outside the controller in any case).
func (k appSetProjects) permit(set *v1alpha1.ApplicationSet) func(context.Context, string, string) error {
	name, templated := set.TemplateProject()
	i := slices.IndexFunc(k.projects, func(p v1alpha1.AppProject) bool { return p.Name == name })
	if templated || i < 0 {
		return nil
	}
	return reposerver.NewGitAccess(set, k.namespace, k.projects[i:i+1]).Check
}

// sourceRepos returns the spec.sourceRepos of the AppProject name when it
// is known here, else "*": nothing says what an unknown project permits
// (the policies report the project itself), and Argo CD's implicit
// default project permits every repository.
func (k appSetProjects) sourceRepos(name string) []string {
	if i := slices.IndexFunc(k.projects, func(p v1alpha1.AppProject) bool { return p.Name == name }); i >= 0 {
		return k.projects[i].Spec.SourceRepos
	}
	return []string{"*"}
}

// decodeApplicationSet decodes an ApplicationSet document strictly: a
// field tollgate does not know is refused by name rather than dropped.
func decodeApplicationSet(obj map[string]any) (*v1alpha1.ApplicationSet, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var set v1alpha1.ApplicationSet
	if err := dec.Decode(&set); err != nil {
		return nil, err
	}
	return &set, nil
}

// appSetSources are the generators' sources outside the controller.
func appSetSources(o AppSetOptions, lim render.Limits) (appset.Sources, error) {
	rootDir := cmp.Or(o.RepoRoot, ".")
	root, err := openRepoRoot(rootDir)
	if err != nil {
		return appset.Sources{}, err
	}
	repoURL, _, err := repositoryURL(o.RepoURL, root, rootDir)
	if err != nil {
		return appset.Sources{}, err
	}
	secrets, err := clusterSecrets(o.ClusterFiles, nil, lim)
	if err != nil {
		return appset.Sources{}, err
	}
	return newAppSetSources(root, repoURL, secrets), nil
}

// newAppSetSources serves git generators from the checkout at root when
// their repository is repoURL, and clusters generators from the cluster
// Secrets among secrets, without their credentials
// (reposerver.ClusterSecretsForGeneration) as the controller sends them.
func newAppSetSources(root repoRoot, repoURL string, secrets []corev1.Secret) appset.Sources {
	secrets = reposerver.ClusterSecretsForGeneration(secrets)
	return appset.Sources{
		Git:      checkoutReader{root: root.given, repoURL: repoURL},
		Clusters: func(context.Context) ([]corev1.Secret, error) { return secrets, nil },
	}
}

// clusterSecrets returns the Secrets of the files and of the entries (the
// clusters generator keeps those labelled as Argo CD clusters).
func clusterSecrets(files []string, entries []entry, lim render.Limits) ([]corev1.Secret, error) {
	var out []corev1.Secret
	add := func(where string, obj map[string]any) error {
		if !isKind(obj, "", "Secret") {
			return nil
		}
		var s corev1.Secret
		b, err := json.Marshal(obj)
		if err == nil {
			err = json.Unmarshal(b, &s)
		}
		if err != nil {
			return fmt.Errorf("%s: Secret: %w", where, err)
		}
		out = append(out, s)
		return nil
	}
	for _, f := range files {
		docs, err := decodePath(f, lim)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			if err := add(location(f, d.Line), d.Object); err != nil {
				return nil, err
			}
		}
	}
	for _, e := range entries {
		if err := add(location(e.file, e.doc.Line), e.doc.Object); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// expandApplicationSets generates the Applications of the ApplicationSets
// among entries, as entries located at their ApplicationSet, and an error
// result for each ApplicationSet that does not generate.
func expandApplicationSets(ctx context.Context, generate generateFunc, entries []entry, src appset.Sources, known appSetProjects) ([]entry, []report.Result, []Note) {
	var out []entry
	var failures []report.Result
	var notes []Note
	for _, e := range entries {
		if !isKind(e.doc.Object, v1alpha1.Group, v1alpha1.ApplicationSetKind) {
			continue
		}
		name, _ := nestedString(e.doc.Object, "metadata", "name")
		ns, _ := nestedString(e.doc.Object, "metadata", "namespace")
		fail := func(err error) {
			failures = append(failures, report.Result{File: e.file, Document: e.doc.Index, Line: e.doc.Line,
				Kind: v1alpha1.ApplicationSetKind, Name: name, Namespace: ns, Error: err.Error()})
		}
		_, gen, refused, err := generateSet(ctx, generate, e.doc.Object, src, known)
		if errors.Is(err, appset.ErrNotGeneratedHere) {
			// A generator only the controller runs (a provider's API, a
			// plugin, a cluster decision resource): noted, as a source of
			// another repository is; the ApplicationSet itself is judged.
			notes = append(notes, Note{File: e.file, Line: e.doc.Line, Message: fmt.Sprintf("ApplicationSet %q: %v", name, err)})
			continue
		}
		if err != nil {
			fail(err)
			continue
		}
		for _, err := range refused {
			fail(err)
		}
		for _, g := range gen {
			d := e.doc
			d.Object = g.Application
			out = append(out, entry{doc: d, root: e.root, file: e.file})
		}
	}
	return out, failures, notes
}

// checkoutReader serves the repository under test from its checkout.
type checkoutReader struct {
	root, repoURL string
}

// Checkout implements appset.GitReader. The revision is not checked out:
// the checkout is what is under test.
func (c checkoutReader) Checkout(_ context.Context, repoURL, _ string) (string, error) {
	if c.repoURL == "" || reposerver.NormalizeURL(repoURL) != c.repoURL {
		return "", fmt.Errorf("repository %s is not the repository under test (--repo-url), the only one read outside the controller", reposerver.RedactURL(repoURL))
	}
	return c.root, nil
}

// decodePath decodes the documents of a file named on the command line,
// read as --project files are.
func decodePath(file string, lim render.Limits) ([]render.Document, error) {
	data, err := bounded.ReadFile(file, lim.MaxFileBytes)
	if err != nil {
		return nil, err
	}
	docs, _, err := render.Decode(file, data, lim)
	return docs, err
}
