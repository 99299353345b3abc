package application

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/engine/desired"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// manifestRequest is the request for the manifests of the Application of
// tg (desired.Builder.Request): its sources at their targetRevisions (an
// operation's revisions are already in the sources, see
// requestedApplication, so what is rendered is what the gate judged), the
// destination's capabilities, branch and tag names resolved from a
// listing up to listingMaxAge old (none when not positive), and with
// verify the signature check the project asks for.
func (r *Reconciler) manifestRequest(ctx context.Context, tg *target, listingMaxAge time.Duration, verify bool) (*reposerver.Request, error) {
	t := desired.Target{
		App: tg.app, Sources: tg.sources, Project: tg.project, VerifySignatures: verify, Secrets: tg.secrets,
		ListingMaxAge: listingMaxAge, NoCache: tg.hard,
	}
	if s := r.settings.Load(); s != nil {
		t.KustomizeBuildOptions = s.KustomizeBuildOptions
	}
	if tg.cluster != nil {
		var err error
		if t.KubeVersion, t.APIVersions, err = tg.cluster.capabilities(ctx, r.opts.Now()); err != nil {
			return nil, err
		}
	}
	return r.builder.Request(ctx, t)
}

// argoSecrets lists the Argo CD Secrets (repository, repo-creds, cluster)
// of the control-plane namespace from the cache.
func (r *Reconciler) argoSecrets(ctx context.Context) ([]corev1.Secret, error) {
	return argocd.ListSecrets(ctx, r.client, r.opts.Namespace)
}
