package reposerver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// ManifestsPath is where a repo-server answers Generate requests.
const ManifestsPath = "/v1/manifests"

// Request asks for the manifests of one Application.
type Request struct {
	// AppName is the Application's instance name (v1alpha1.Application.InstanceName);
	// it and Namespace (the destination namespace) give Helm its release
	// name and namespace unless the source sets them.
	AppName   string `json:"appName"`
	Namespace string `json:"namespace,omitempty"`
	// Project is the Application's AppProject, for Argo CD's build
	// variable ARGOCD_APP_PROJECT_NAME.
	Project string `json:"project,omitempty"`
	// KubeVersion and APIVersions are the destination cluster's, what
	// Helm charts see as .Capabilities (render.AppInfo).
	KubeVersion string   `json:"kubeVersion,omitempty"`
	APIVersions []string `json:"apiVersions,omitempty"`
	// Sources are the Application's sources at the revisions to render
	// (an operation's revisions already in place).
	Sources []Source `json:"sources"`
	// MultipleSources is true when the sources come from spec.sources:
	// messages then name spec.sources[i] rather than spec.source.
	MultipleSources bool `json:"multipleSources,omitempty"`
	// ListingMaxAge is how old a repository's reference listing (or a Helm
	// repository's index) may be to resolve branch and tag names (chart
	// versions); zero asks the server every time.
	ListingMaxAge time.Duration `json:"listingMaxAge,omitempty"`
	// NoCache renders again even when the output is cached (a hard
	// refresh).
	NoCache bool `json:"noCache,omitempty"`
	// KnownKey is the Key of a response the caller still holds: when the
	// key is the same, the response carries no objects (Unchanged).
	KnownKey string `json:"knownKey,omitempty"`
	// HelmRepositories are the Helm repositories and OCI registries (Argo
	// CD repository Secrets of type helm) the Application's project may
	// use, and whose URLs its sourceRepos permit: the credentials of chart
	// sources and of chart dependencies.
	HelmRepositories []HelmRepository `json:"helmRepositories,omitempty"`
	// GitRepositories are the Git repositories and repo-creds templates
	// (Argo CD repository Secrets not of type helm) the Application's
	// project may use, and whose URLs its sourceRepos permit
	// (PermittedGitRepositories), with the SSH known hosts for ssh URLs:
	// the credentials of the remote Kustomize bases a source's
	// kustomizations name (MatchGitRepository; anonymous when none
	// matches).
	GitRepositories []GitRepository `json:"gitRepositories,omitempty"`
	// SourceRepos are the AppProject's spec.sourceRepos: a chart
	// dependency or a remote Kustomize base is fetched only from a
	// repository they permit (RepositoryPermitted), and none permit no
	// such repository. Sources themselves are judged by the controller
	// before it asks.
	SourceRepos []string `json:"sourceRepos,omitempty"`
	// SignatureCheck, when set, asks for the commit of every Git source
	// to be verified before anything is rendered (the AppProject sets
	// signatureKeys).
	SignatureCheck *SignatureCheck `json:"signatureCheck,omitempty"`
	// KustomizeBuildOptions are argocd-cm's kustomize.buildOptions, given
	// to every Kustomize render of the request.
	KustomizeBuildOptions string `json:"kustomizeBuildOptions,omitempty"`
}

// NewRequest is the request for app's manifests, Argo CD running in
// namespace controlNS: the Application's instance name
// (v1alpha1.Application.InstanceName), destination namespace and project,
// and whether messages name spec.sources. The caller adds the sources at
// the revisions to render, and what else it knows.
func NewRequest(app *v1alpha1.Application, controlNS string) *Request {
	return &Request{
		AppName: app.InstanceName(controlNS), Namespace: app.Spec.Destination.Namespace,
		Project: app.ProjectName(), MultipleSources: app.Spec.HasMultipleSources(),
	}
}

// SignatureCheck is what the commits of a Request's Git sources are
// verified against: Argo CD's GnuPG keys and the AppProject's
// signatureKeys. Helm repository and OCI sources are not verified, as in
// Argo CD.
type SignatureCheck struct {
	// Keys are the ASCII-armored public keys of argocd-gpg-keys-cm, by key
	// ID (its data); a signature made with a key not among them cannot be
	// checked.
	Keys map[string]string `json:"keys"`
	// Allowed are the AppProject's signatureKeys (key IDs or
	// fingerprints): nothing is rendered unless every Git source's commit
	// carries a good signature made with one of them.
	Allowed []string `json:"allowed"`
}

// Source is one source of a Request with the credentials to fetch it.
type Source struct {
	Source      v1alpha1.ApplicationSource `json:"source"`
	Credentials Credentials                `json:"credentials"`
	// Revision, when set, is fetched in place of what Source's
	// targetRevision resolves to (a commit, or a chart version, an earlier
	// answer reported), as Argo CD's ManifestRequest.Revision: the build
	// variables keep the source's targetRevision.
	Revision string `json:"revision,omitempty"`
}

// Response is what the sources rendered.
type Response struct {
	// Revisions are the commit SHAs (a chart version for a Helm
	// repository source), one per source.
	Revisions []string `json:"revisions"`
	// SourceTypes has one entry per source; ref-only sources are empty.
	SourceTypes []v1alpha1.ApplicationSourceType `json:"sourceTypes"`
	// Key identifies what was rendered: every source's repository,
	// revision, path and options.
	Key string `json:"key"`
	// Unchanged is set when Key is the request's KnownKey; Objects is then
	// empty.
	Unchanged bool `json:"unchanged,omitempty"`
	// Objects are the rendered objects as JSON, in source order.
	Objects []json.RawMessage `json:"objects,omitempty"`
	// Cached counts the rendered sources served from the cache.
	Cached int `json:"cached"`
	// Rendered counts the sources rendered for this request.
	Rendered int `json:"rendered"`
	// Signatures has one entry per source when the request has a
	// SignatureCheck: the verification of a Git source's commit, the zero
	// Signature for a Helm repository or OCI source.
	Signatures []Signature `json:"signatures,omitempty"`
	// Unverified is set when a Git source's commit is not signed with a
	// key SignatureCheck allows: nothing was rendered, and Key and Objects
	// are empty.
	Unverified bool `json:"unverified,omitempty"`
}

// Error codes a repo-server answers with, so the controller can branch on
// them as on the errors of an in-process Service.
const (
	// CodeUnreachable: a repository could not be reached
	// (ErrRepoUnreachable), or no repo-server could.
	CodeUnreachable = "Unreachable"
	// CodeLimit: a render or fetch passed one of its limits.
	CodeLimit = "Limit"
	// CodeInvalid: the request cannot be served as it is (an unsupported
	// field, a missing file, a bad chart).
	CodeInvalid = "Invalid"
)

// Error is a failed request as the wire carries it.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Reason is, for an ApplicationSet that does not generate, the reason
	// of its ErrorOccurred condition (Error's).
	Reason string `json:"reason,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Unwrap lets errors.Is(err, ErrRepoUnreachable) hold for an
// unreachable repository on either side of the wire.
func (e *Error) Unwrap() error {
	if e.Code == CodeUnreachable {
		return ErrRepoUnreachable
	}
	return nil
}

// SourceField names source i of a request the way the Application's
// fields do.
func (r *Request) SourceField(i int) string {
	if r.MultipleSources {
		return fmt.Sprintf("spec.sources[%d]", i)
	}
	return "spec.source"
}

// Generator answers manifest requests; *Service and *Client implement it.
type Generator interface {
	Generate(ctx context.Context, req *Request) (*Response, error)
}
