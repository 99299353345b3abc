package application

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
)

// fingerprintTimeout bounds reading resourceVersions from the metadata
// cache, which waits for a new informer's first LIST.
const fingerprintTimeout = 20 * time.Second

// memo is the last full comparison of one Application. An idle resync
// reuses it when nothing it was computed from has changed (see the package
// documentation).
type memo struct {
	// identity hashes everything the desired state and the comparison
	// depend on except the live objects: the Application spec, the project's
	// resourceVersion, the revisions and the render keys.
	identity string
	// renderKey is the repo-server's key of the rendered sources.
	renderKey string
	// fingerprint hashes the live objects' resourceVersions as the
	// metadata cache saw them just before the comparison.
	fingerprint string
	// refs are the objects the fingerprint covers.
	refs []apply.Ref
	at   time.Time
	cmp  *comparison
}

// recall returns the memo of key when its identity matches and it is not
// older than Options.CompareMaxAge.
func (r *Reconciler) recall(key types.NamespacedName, identity string) *memo {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.memos[key]
	if !ok || m.identity != identity || r.opts.Now().Sub(m.at) > r.opts.CompareMaxAge {
		return nil
	}
	return m
}

func (r *Reconciler) remember(key types.NamespacedName, m *memo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.memos[key] = m
}

// memoRenderKey returns the render key of key's memo, or "".
func (r *Reconciler) memoRenderKey(key types.NamespacedName) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.memos[key]; ok {
		return m.renderKey
	}
	return ""
}

// forget drops the memo of key, so the next reconcile compares in full.
func (r *Reconciler) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.memos, key)
	delete(r.allowed, key)
}

// allowedBefore reports whether judgeBeforeFetch allowed the spec and
// project of identity id for key last time.
func (r *Reconciler) allowedBefore(key types.NamespacedName, id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.allowed[key] == id
}

// rememberAllowed records that judgeBeforeFetch allowed identity id for key.
func (r *Reconciler) rememberAllowed(key types.NamespacedName, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.allowed[key] = id
}

// identity hashes what a comparison depends on besides the live objects;
// clusterVersion is the resourceVersion of the destination's cluster
// Secret (what of the cluster the engine manages).
func identity(app *v1alpha1.Application, project *v1alpha1.AppProject, clusterVersion, renderKey string, revisions []string) (string, error) {
	spec, err := json.Marshal(app.Spec)
	if err != nil {
		return "", fmt.Errorf("encode application spec: %w", err)
	}
	h := sha256.New()
	h.Write(spec)
	projectVersion := "-"
	if project != nil {
		projectVersion = project.ResourceVersion
	}
	for _, s := range append([]string{projectVersion, clusterVersion, renderKey, app.Namespace, app.Name}, revisions...) {
		h.Write([]byte{0})
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fingerprint hashes the resourceVersions of refs as the cluster's metadata
// cache holds them: no API call once the informers of the kinds run. A
// missing object hashes as "-". It fails when a kind is not served or the
// cache cannot answer in time; the caller then compares in full. A kind
// whose informer did not sync in time is not waited on again. known, by
// refKey, are versions read from the API server (a comparison's): they
// stand in for the cache's, which may not have caught up yet.
func fingerprint(parent context.Context, cl *cluster, refs []apply.Ref, known map[apply.Ref]string) (string, error) {
	ctx, cancel := context.WithTimeout(parent, fingerprintTimeout)
	defer cancel()
	// Each ref's string is built once, not at every comparison of the sort.
	type keyedRef struct {
		key string
		ref apply.Ref
	}
	sorted := make([]keyedRef, len(refs))
	for i, ref := range refs {
		sorted[i] = keyedRef{key: ref.String(), ref: ref}
	}
	slices.SortFunc(sorted, func(a, b keyedRef) int { return strings.Compare(a.key, b.key) })
	h := sha256.New()
	for _, k := range sorted {
		ref := k.ref
		if rv, ok := known[refKey(ref)]; ok {
			fmt.Fprintf(h, "%s=%s\n", k.key, rv)
			continue
		}
		gvk := ref.GroupVersionKind()
		if _, bad := cl.uncached.Load(gvk); bad {
			return "", fmt.Errorf("read resource version of %s: kind %s cannot be cached", ref, gvk.Kind)
		}
		md := &metav1.PartialObjectMetadata{}
		md.SetGroupVersionKind(gvk)
		rv := "-"
		// Read without a deep copy: only the resourceVersion is read,
		// and md is a copy of the cached struct (nothing of it is
		// changed).
		err := cl.meta.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, md, client.UnsafeDisableDeepCopy)
		switch {
		case err == nil:
			rv = md.ResourceVersion
		case apierrors.IsNotFound(err):
		default:
			if ctx.Err() != nil && parent.Err() == nil {
				// The informer of this kind does not sync (listing or
				// watching it is refused): stop waiting on it.
				cl.uncached.Store(gvk, true)
			}
			return "", fmt.Errorf("read resource version of %s: %w", ref, err)
		}
		fmt.Fprintf(h, "%s=%s\n", k.key, rv)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
