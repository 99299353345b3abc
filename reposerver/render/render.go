package render

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/go-logr/logr"
)

// Kinds of application source, as reported in Result.Kind.
const (
	KindDirectory = "directory"
	KindKustomize = "kustomize"
	KindHelm      = "helm"
	// KindJsonnet is the Document.Origin of objects a .jsonnet file of a
	// directory source produced.
	KindJsonnet = "jsonnet"
)

// Options are the fields of Argo CD's ApplicationSource that change what is
// rendered, without Kubernetes types.
type Options struct {
	Directory *DirectoryOptions
	Kustomize *KustomizeOptions
	Helm      *HelmOptions
	// Plugin is set for a plugin source (Type KindPlugin), which Build
	// does not render.
	Plugin *PluginOptions `json:",omitempty"`
	// KustomizeBuildOptions are argocd-cm's kustomize.buildOptions, the
	// flags of `kustomize build` every Kustomize render gets (see
	// kustomizerOptions).
	KustomizeBuildOptions string `json:",omitempty"`
	// Namespace is the destination namespace. Helm uses it as the release
	// namespace when HelmOptions.Namespace is empty.
	Namespace string
	// AppName is the Application's name, Helm's release name when
	// HelmOptions.ReleaseName is empty.
	AppName string
	// Type, when set (KindDirectory, KindKustomize, KindHelm or KindPlugin), is the
	// source's explicit type, which wins over detection as in Argo CD (an
	// Application's directory, kustomize or helm block); "" detects.
	Type string
	// Capabilities are what Helm charts see as .Capabilities; nil means the
	// Helm SDK's defaults.
	Capabilities *Capabilities
	// Refs maps the ref name of each other source of the Application to
	// the root of its checkout: Helm value files "$name/path" are read
	// from there, confined to that root.
	Refs map[string]string
	// ChartDependencies are dependencies a Helm chart declares but does
	// not vendor, fetched by the repo-server: each is loaded as if `helm
	// dependency build` had put it in the chart's charts/ directory.
	ChartDependencies []ChartDependency `json:",omitempty"`
	// RemoteBases are the remote Kustomize bases the repo-server fetched
	// for this source (FindRemoteBases), by the entry as a kustomization
	// writes it: kustomize builds each from its checkout, read-only and
	// confined to that checkout, instead of cloning it. A remote entry
	// that is not here is refused (ErrRemoteReference).
	RemoteBases map[string]RemoteBase `json:",omitempty"`
	// KustomizeCharts are the charts of kustomizations' helmCharts that
	// the repo-server pulled for this source (FindRemoteBases finds
	// them), used when kustomize.buildOptions enable Helm: kustomize
	// inflates each from here instead of running `helm pull`.
	KustomizeCharts []KustomizeChart `json:",omitempty"`
	// RemoteFiles are the files kustomizations name by URL in their
	// resources that the repo-server downloaded for this source
	// (FindRemote finds them), by URL as written: kustomize reads each
	// from here instead of downloading it. A remote file that is not
	// here is refused (ErrRemoteReference).
	RemoteFiles map[string][]byte `json:",omitempty"`
	// HelmDetails asks Build, for a Helm source, for what Argo CD's
	// repo-server tells of it (Result.Helm) instead of its render.
	HelmDetails bool `json:",omitempty"`
}

// KustomizeChart is a chart of a kustomization's helmCharts pulled by the
// repo-server.
type KustomizeChart struct {
	// Repo, Name and Version are the entry's, as its kustomization writes
	// them: the key the render finds the chart by.
	Repo, Name string
	Version    string `json:",omitempty"`
	// Dir is the unpacked chart, an absolute path outside the repository
	// (its Chart.yaml at the top), read-only.
	Dir string
}

// RemoteBase is a remote Kustomize base checked out by the repo-server.
type RemoteBase struct {
	// Root is the checkout of the base's repository at its ref, an
	// absolute path outside the source's repository; Path the base's
	// directory in it, slash-separated ("" for the root).
	Root string
	Path string `json:",omitempty"`
	// RepoURL and Ref are the entry's (GitSpec): kustomize writes them in
	// the origin annotations of the base's objects.
	RepoURL string
	Ref     string `json:",omitempty"`
}

// ChartDependency is one fetched chart dependency: an archive (in the
// repo-server's chart cache, outside the repository) or, for a file://
// dependency, a chart directory inside the repository.
type ChartDependency struct {
	Name string
	// Archive is the absolute path of a .tgz; Dir a slash-separated path
	// relative to the repository root.
	Archive string `json:",omitempty"`
	Dir     string `json:",omitempty"`
}

// DirectoryOptions mirror spec.source.directory.
type DirectoryOptions struct {
	// Recurse reads subdirectories too.
	Recurse bool
	// Include and Exclude are glob patterns matched against each file's
	// path relative to the application directory. A pattern may be a
	// comma-separated list or a {a,b} alternation; `*` matches across `/`.
	// Exclude wins over Include.
	Include, Exclude string
	// Jsonnet are the options of the directory's .jsonnet files.
	Jsonnet JsonnetOptions
	// DisableExtensionFilter reads files of every extension, those that
	// are neither .json nor .jsonnet as YAML, as Argo CD does.
	DisableExtensionFilter bool
}

// KustomizeOptions mirror spec.source.kustomize. They are applied the way
// Argo CD applies them (`kustomize edit ...` on the application's
// kustomization, in Argo CD's order), on an in-memory copy: the repository
// is never written. Values arrive with Argo CD's build variables already
// substituted (ApplicationOptions).
type KustomizeOptions struct {
	NamePrefix, NameSuffix string
	// Images like `kustomize edit set image`: "name=newname:tag",
	// "name=newname@digest", "name=newname", "name:tag", "name@digest".
	Images   []string
	Replicas []KustomizeReplica
	// CommonLabels go to commonLabels (selectors and templates too) or,
	// with LabelWithoutSelector, to a new labels entry that leaves
	// selectors alone and templates too unless LabelIncludeTemplates.
	CommonLabels                                map[string]string
	LabelWithoutSelector, LabelIncludeTemplates bool
	CommonAnnotations                           map[string]string
	// ForceCommonLabels and ForceCommonAnnotations overwrite keys the
	// kustomization already sets; without them such a key is an error, as
	// `kustomize edit add label` without --force.
	ForceCommonLabels, ForceCommonAnnotations bool
	Namespace                                 string
	// Patches are appended to the kustomization's patches.
	Patches []KustomizePatch
	// Components are added like `kustomize edit add component`: paths
	// relative to the application directory, globs expanded. With
	// IgnoreMissingComponents, paths that do not exist in the repository
	// are left out.
	Components              []string
	IgnoreMissingComponents bool
}

// KustomizeReplica sets the replicas of the workload called Name.
type KustomizeReplica struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// KustomizePatch is one entry of a kustomization's patches, written as
// kustomize reads it.
type KustomizePatch struct {
	Path    string           `json:"path,omitempty"`
	Patch   string           `json:"patch,omitempty"`
	Target  *KustomizeTarget `json:"target,omitempty"`
	Options map[string]bool  `json:"options,omitempty"`
}

// KustomizeTarget selects the resources a patch applies to.
type KustomizeTarget struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Name               string `json:"name,omitempty"`
	Namespace          string `json:"namespace,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty"`
}

// Capabilities are the Kubernetes version and API versions a chart renders
// against, as `helm template --kube-version --api-versions`.
type Capabilities struct {
	// KubeVersion is a version such as "1.33.2"; "" keeps the SDK's.
	KubeVersion string `json:"kubeVersion,omitempty"`
	// APIVersions are added to the SDK's default API versions.
	APIVersions []string `json:"apiVersions,omitempty"`
}

// HelmOptions mirror spec.source.helm.
type HelmOptions struct {
	// ValueFiles are merged in order. Relative paths are relative to the
	// chart directory, absolute ones to the repository root, "$name/path"
	// to the root of the source with ref name (Options.Refs), as in Argo CD.
	ValueFiles []string
	// Values is a YAML document merged after ValueFiles.
	Values string
	// ValuesObject is merged after Values.
	ValuesObject map[string]any
	// Parameters are applied last, like `--set` (or `--set-string`).
	Parameters  []HelmParameter
	ReleaseName string
	Namespace   string
	// SkipCrds leaves out the chart's crds/ directory.
	SkipCrds bool
	// IgnoreMissingValueFiles skips value files that do not exist.
	IgnoreMissingValueFiles bool
	// FileParameters are applied after Parameters, like `--set-file`:
	// the value is the content of the file, found as value files are.
	FileParameters []HelmFileParameter
	// SkipTests leaves out the chart's test hooks (`--skip-tests`).
	SkipTests bool
	// SkipSchemaValidation does not check the values against the chart's
	// values.schema.json (`--skip-schema-validation`).
	SkipSchemaValidation bool
	// SkipHooks leaves out the chart's hooks (`--no-hooks`), which only
	// a kustomization's helmCharts ask for (skipHooks).
	SkipHooks bool `json:",omitempty"`
}

// HelmFileParameter is one `--set-file name=path`.
type HelmFileParameter struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// HelmParameter is one `--set name=value` (or `--set-string` when
// ForceString).
type HelmParameter struct {
	Name, Value string
	ForceString bool
}

// Result is the output of Build.
type Result struct {
	// Documents in a stable order: file order for a directory, kustomize's
	// output order, and `helm template`'s order (CRDs, manifests, hooks).
	Documents []Document
	Notes     []Note
	// Kind is KindDirectory, KindKustomize or KindHelm.
	Kind string
	// Helm is set instead of Documents when Options.HelmDetails asked for
	// a Helm source's details.
	Helm *HelmDetails `json:",omitempty"`
}

// Build renders the application source at dir inside the repository checked
// out at root, the way Argo CD's repo server would. dir is relative to root
// (or absolute inside it); nothing outside root is read. Document files are
// named relative to root, symlinks in dir resolved. The source kind is
// detected from dir: a kustomization file means kustomize, a Chart.yaml
// means Helm (when both exist, opts.Helm set picks Helm), anything else is a
// directory of manifests.
func Build(ctx context.Context, root, dir string, opts Options, lim Limits) (Result, error) {
	lim = lim.withDefaults()
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("render %s: %w", dir, err)
	}
	r, err := openRepo(root)
	if err != nil {
		return Result{}, fmt.Errorf("render %s: %w", dir, err)
	}
	appRel, err := r.clean(dir)
	if err != nil {
		return Result{}, fmt.Errorf("render %s: %w", dir, err)
	}
	appDir, err := r.resolveRel(appRel)
	if err != nil {
		return Result{}, fmt.Errorf("render %s: %w", appRel, err)
	}
	if fi, err := os.Stat(appDir); err != nil {
		return Result{}, fmt.Errorf("render %s: %w", appRel, err)
	} else if !fi.IsDir() {
		return Result{}, fmt.Errorf("render %s: not a directory", appRel)
	}
	// Files are named by where they really are: kustomize and Helm resolve
	// relative paths from the real directory.
	src := source{repo: r, dir: appDir, rel: r.rel(appDir), opts: opts, lim: lim}
	kind, kustFile := detect(appDir, opts)
	res := Result{Kind: kind}
	switch kind {
	case KindPlugin:
		err = errors.New("a config management plugin's source is rendered by its plugin")
	case KindHelm:
		if opts.HelmDetails {
			res.Helm, err = src.helmDetails()
			break
		}
		res.Documents, res.Notes, err = guarded(ctx, func() ([]Document, []Note, error) { return src.helm() })
	case KindKustomize:
		res.Documents, res.Notes, err = guarded(ctx, func() ([]Document, []Note, error) { return src.kustomize(kustFile) })
	default:
		res.Documents, res.Notes, err = src.directory(ctx)
	}
	if err != nil {
		return Result{}, fmt.Errorf("render %s %s: %w", res.Kind, appRel, err)
	}
	logr.FromContextOrDiscard(ctx).V(1).Info("rendered application source",
		"kind", res.Kind, "path", appRel, "documents", len(res.Documents), "notes", len(res.Notes))
	return res, nil
}

// DetectKind returns the kind Build would render dir as (KindDirectory,
// KindKustomize or KindHelm), reading nothing but the directory's entries.
func DetectKind(root, dir string, opts Options) (string, error) {
	r, err := openRepo(root)
	if err != nil {
		return "", fmt.Errorf("render %s: %w", dir, err)
	}
	appRel, err := r.clean(dir)
	if err != nil {
		return "", fmt.Errorf("render %s: %w", dir, err)
	}
	appDir, err := r.resolveRel(appRel)
	if err != nil {
		return "", fmt.Errorf("render %s: %w", appRel, err)
	}
	kind, _ := detect(appDir, opts)
	return kind, nil
}

// detect picks the source kind of the application directory: opts.Type
// when set; else a kustomization file means kustomize, a Chart.yaml Helm
// (both: Helm when opts.Helm is set), anything else a directory of
// manifests. It returns the kustomization file for kustomize ("" when an
// explicit kustomize source has none).
func detect(appDir string, opts Options) (kind, kustFile string) {
	kustFile = findKustomization(appDir)
	switch opts.Type {
	case KindKustomize:
		return KindKustomize, kustFile
	case KindHelm, KindDirectory, KindPlugin:
		return opts.Type, ""
	}
	_, chartErr := os.Stat(filepath.Join(appDir, "Chart.yaml"))
	switch hasChart := chartErr == nil; {
	case hasChart && (kustFile == "" || opts.Helm != nil):
		return KindHelm, ""
	case kustFile != "":
		return KindKustomize, kustFile
	}
	return KindDirectory, ""
}

// source is one application source being rendered.
type source struct {
	repo repo
	// dir is the real path of the application directory; rel its
	// repo-relative path.
	dir, rel string
	opts     Options
	lim      Limits
}

// errPanic marks a panic inside kustomize or Helm turned into an error.
var errPanic = errors.New("internal error in renderer")

// guarded runs a kustomize or Helm render, turning a panic into an error
// (both libraries have panicked on bad input) and returning early when ctx
// is done. The render itself cannot be interrupted; it finishes in the
// background and its result is dropped.
func guarded(ctx context.Context, fn func() ([]Document, []Note, error)) ([]Document, []Note, error) {
	type result struct {
		docs  []Document
		notes []Note
		err   error
	}
	ch := make(chan result, 1)
	go func() {
		var res result
		defer func() {
			if p := recover(); p != nil {
				logr.FromContextOrDiscard(ctx).V(1).Info("renderer panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				res = result{err: fmt.Errorf("%w: %v", errPanic, p)}
			}
			ch <- res
		}()
		res.docs, res.notes, res.err = fn()
	}()
	select {
	case res := <-ch:
		return res.docs, res.notes, res.err
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}
