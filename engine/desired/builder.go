package desired

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// GPGKeysConfigMap is Argo CD's ConfigMap of GnuPG public keys in the
// control-plane namespace: key ID to ASCII-armored public key.
const GPGKeysConfigMap = "argocd-gpg-keys-cm"

// Builder builds desired states for the Applications of one control-plane
// namespace. It holds no state between calls.
type Builder struct {
	// Namespace is the control-plane namespace: its Argo CD Secrets give
	// the credentials, its argocd-gpg-keys-cm the GnuPG keys.
	Namespace string
	// Reader reads the SSH known hosts and the GnuPG keys (live, not from
	// a cache).
	Reader client.Reader
	// Manifests fetches and renders (a repo-server, or its service in
	// process).
	Manifests reposerver.Generator
	// Tracking marks the desired objects; empty means annotation.
	Tracking v1alpha1.TrackingMethod
	// Rendered, when set, sees every answer (the controller counts the
	// renders it cost).
	Rendered func(*reposerver.Response)
}

// Target is what a desired state is built from.
type Target struct {
	// App is the Application; Sources its sources at the revisions to
	// render (an operation's revisions already in place).
	App     *v1alpha1.Application
	Sources []v1alpha1.ApplicationSource
	// Project is the Application's AppProject, nil when there is none:
	// its sourceRepos say where chart dependencies may come from (none
	// without a project) and which Helm repository Secrets are sent.
	Project *v1alpha1.AppProject
	// VerifySignatures asks for the commits to be verified when the
	// project sets signatureKeys (a sync's comparison; a diff shows what
	// is in Git either way).
	VerifySignatures bool
	// Secrets are the Argo CD Secrets of the control-plane namespace.
	Secrets []corev1.Secret
	// KubeVersion and APIVersions are the destination cluster's, what Helm
	// charts see as .Capabilities.
	KubeVersion string
	APIVersions []string
	// ListingMaxAge is how old a reference listing may be to resolve
	// branch and tag names; zero lists again.
	ListingMaxAge time.Duration
	// NoCache renders again even when the output is cached.
	NoCache bool
	// KustomizeBuildOptions are argocd-cm's kustomize.buildOptions.
	KustomizeBuildOptions string
}

// Request is the request for the manifests of t's Application: its
// sources at their targetRevisions, each with the credentials of the
// control-plane namespace's Argo CD Secrets that match it for the
// Application's project. The project's sourceRepos go with the request:
// chart dependencies and remote Kustomize bases are fetched only from the
// repositories they permit, and only the Helm and Git repository Secrets
// of those are sent (reposerver.PermittedRepositories,
// reposerver.PermittedGitRepositories); without a project, none. With
// VerifySignatures and a project that sets signatureKeys, the request asks
// for the commits to be verified (SignatureCheck).
func (b *Builder) Request(ctx context.Context, t Target) (*reposerver.Request, error) {
	app := t.App
	req := reposerver.NewRequest(app, b.Namespace)
	req.KubeVersion, req.APIVersions = t.KubeVersion, t.APIVersions
	req.ListingMaxAge, req.NoCache, req.KustomizeBuildOptions = t.ListingMaxAge, t.NoCache, t.KustomizeBuildOptions
	creds := &argocd.Credentials{Reader: b.Reader, Namespace: b.Namespace, Secrets: t.Secrets}
	for _, s := range t.Sources {
		if s.Chart != "" {
			req.Sources = append(req.Sources, reposerver.Source{Source: s})
			continue
		}
		c, err := creds.For(ctx, s.RepoURL, app.ProjectName())
		if err != nil {
			return nil, err
		}
		req.Sources = append(req.Sources, reposerver.Source{Source: s, Credentials: c})
	}
	if t.Project != nil {
		req.SourceRepos = t.Project.Spec.SourceRepos
	}
	repos, err := reposerver.PermittedRepositories(ctx, argocd.HelmRepositories(t.Secrets, app.ProjectName()), req.SourceRepos)
	if err != nil {
		return nil, err
	}
	req.HelmRepositories = repos
	if req.GitRepositories, err = creds.GitRepositories(ctx, app.ProjectName(), req.SourceRepos); err != nil {
		return nil, err
	}
	if t.VerifySignatures {
		if req.SignatureCheck, err = SignatureCheck(ctx, b.Reader, b.Namespace, t.Project); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// Generate asks for req's manifests.
func (b *Builder) Generate(ctx context.Context, req *reposerver.Request) (*reposerver.Response, error) {
	resp, err := b.Manifests.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	if len(resp.Revisions) != len(req.Sources) || len(resp.SourceTypes) != len(req.Sources) {
		return nil, fmt.Errorf("repo-server answered %d revisions and %d source types for %d sources", len(resp.Revisions), len(resp.SourceTypes), len(req.Sources))
	}
	if b.Rendered != nil {
		b.Rendered(resp)
	}
	return resp, nil
}

// State is the desired state of resp, the answer to req, for the
// Application instance at dest; its objects are built on first need
// (State.Build). An Unchanged answer's objects are asked for again then.
func (b *Builder) State(req *reposerver.Request, resp *reposerver.Response, dest Destination) *State {
	s := &State{
		Revisions: resp.Revisions, SourceTypes: resp.SourceTypes, RenderKey: resp.Key,
		unbuilt: &unbuilt{rendered: resp.Objects, instance: req.AppName, tracking: b.Tracking, dest: dest},
	}
	if resp.Unchanged {
		s.unbuilt.load = b.loader(req, resp)
	}
	return s
}

// SignatureCheck returns the signature check of a render request for
// project: nil when the project sets no signatureKeys. The keys are read
// live from argocd-gpg-keys-cm in namespace; without the ConfigMap there
// are none, and every signed commit is refused as one whose key is
// unknown.
func SignatureCheck(ctx context.Context, reader client.Reader, namespace string, project *v1alpha1.AppProject) (*reposerver.SignatureCheck, error) {
	if project == nil || len(project.Spec.SignatureKeys) == 0 {
		return nil, nil
	}
	check := &reposerver.SignatureCheck{Keys: map[string]string{}}
	for _, k := range project.Spec.SignatureKeys {
		check.Allowed = append(check.Allowed, k.KeyID)
	}
	var cm corev1.ConfigMap
	err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: GPGKeysConfigMap}, &cm)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("read configmap %s: %w", GPGKeysConfigMap, err)
	default:
		for id, key := range cm.Data {
			check.Keys[id] = key
		}
	}
	return check, nil
}
