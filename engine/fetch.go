package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/source"
)

// knownHostsConfigMap and knownHostsKey hold Argo CD's SSH known hosts.
const (
	knownHostsConfigMap = "argocd-ssh-known-hosts-cm"
	knownHostsKey       = "ssh_known_hosts"
)

// fetched is one source of an Application at one commit.
type fetched struct {
	source   v1alpha1.ApplicationSource
	checkout source.Checkout
}

// fetchSources resolves and checks out every source of an Application of
// AppProject project, each at its targetRevision: an operation's revisions
// are already in the sources (see requestedApplication), so what is fetched
// is what the gate judged. secrets are the control-plane namespace's Argo CD
// Secrets; those scoped to another project are not used. Branch and tag
// names are resolved from a repository listing up to listingMaxAge old
// (none when not positive).
func (r *Reconciler) fetchSources(ctx context.Context, project string, sources []v1alpha1.ApplicationSource, secrets []corev1.Secret, listingMaxAge time.Duration) ([]fetched, error) {
	out := make([]fetched, len(sources))
	var knownHosts []byte
	for i, s := range sources {
		if s.RepoURL == "" {
			return nil, fmt.Errorf("source %d: repoURL is empty", i+1)
		}
		if s.Chart != "" {
			return nil, fmt.Errorf("source %d (%s): Helm repository sources (chart %q) are not supported; point the source at a chart directory in Git", i+1, source.RedactURL(s.RepoURL), s.Chart)
		}
		if knownHosts == nil && isSSH(s.RepoURL) {
			kh, err := r.knownHosts(ctx)
			if err != nil {
				return nil, err
			}
			knownHosts = kh
		}
		creds := source.MatchCredentials(s.RepoURL, project, secrets, knownHosts)
		co, err := r.sources.Fetch(ctx, s.RepoURL, s.TargetRevision, creds, source.ListingMaxAge(listingMaxAge))
		if err != nil {
			return nil, err
		}
		out[i] = fetched{source: s, checkout: co}
	}
	return out, nil
}

// isSSH reports whether a repository URL uses SSH.
func isSSH(u string) bool {
	return strings.HasPrefix(source.NormalizeURL(u), "ssh://")
}

// knownHosts reads Argo CD's known hosts ConfigMap; a missing ConfigMap is
// no known hosts.
func (r *Reconciler) knownHosts(ctx context.Context) ([]byte, error) {
	var cm corev1.ConfigMap
	err := r.apiReader.Get(ctx, client.ObjectKey{Namespace: r.opts.Namespace, Name: knownHostsConfigMap}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		return []byte{}, nil
	case err != nil:
		return nil, fmt.Errorf("read configmap %s: %w", knownHostsConfigMap, err)
	}
	return []byte(cm.Data[knownHostsKey]), nil
}

// argoSecrets lists the Argo CD Secrets (repository, repo-creds, cluster)
// of the control-plane namespace from the cache.
func (r *Reconciler) argoSecrets(ctx context.Context) ([]corev1.Secret, error) {
	var list corev1.SecretList
	if err := r.client.List(ctx, &list, client.InNamespace(r.opts.Namespace), client.HasLabels{SecretTypeLabel}); err != nil {
		return nil, fmt.Errorf("list argo cd secrets: %w", err)
	}
	return list.Items, nil
}
