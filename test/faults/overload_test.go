package faults

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// configMapFiles are one Application's manifests: one ConfigMap whose
// value is v.
func configMapFiles(v string) func(name string) map[string]string {
	return func(name string) map[string]string {
		return map[string]string{"apps/" + name + "/configmap.yaml": fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
data:
  key: %s
`, name, v)}
	}
}

// TestAPIServerErrorsBackOff: the API server answers every request of the
// controller with 429 (Retry-After: 1), then with 500, while a new commit
// waits to be synced. The controller backs off instead of retrying in a
// hot loop (its requests stay within a budget), and once the API server
// answers again it catches up: the commit is synced.
func TestAPIServerErrorsBackOff(t *testing.T) {
	const resync, phase = 5 * time.Second, 8 * time.Second
	names := []string{"throttled-0", "throttled-1", "throttled-2", "throttled-3"}
	ns, repoURL, git := repository(t, names, configMapFiles("v1"))
	// A lease longer than the outage: the replica keeps its share, and its
	// reconciles meet the errors (with a short one it would stop working
	// at its renew deadline instead).
	r := startReplica(t, "replica-throttled", replicaOptions{leaseDuration: time.Minute, resync: resync})
	waitMembers(t, 1, r)
	applications(t, ns, repoURL, names)
	head := git.Head(t, "config", gitserver.DefaultBranch)
	waitSyncedAt(t, names, head)

	next := git.Commit(t, "config", filesOf(names, configMapFiles("v2")), "v2")
	r.api.fail(http.StatusTooManyRequests)
	time.Sleep(phase) // the phase of refusals under test, not a wait for anything
	throttled := r.api.heal()
	r.api.fail(http.StatusInternalServerError)
	time.Sleep(phase) // as above
	failed := r.api.heal()
	t.Logf("requests refused: %d with 429 and %d with 500, in %s each, for %d Applications", throttled, failed, phase, len(names))
	// The budget: per Application, a reconcile every resync plus
	// controller-runtime's per-item backoff (5ms doubling, about 11 tries
	// in 8s), each of whose calls client-go may retry after a 429's
	// Retry-After; plus Lease renewals and watch re-lists. A hot loop
	// makes thousands.
	if budget := 400; throttled > budget || failed > budget {
		t.Errorf("the controller did not back off: %d and %d requests refused in %s, budget %d", throttled, failed, phase, budget)
	}

	waitSyncedAt(t, names, next)
	for _, name := range names {
		var cm corev1.ConfigMap
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil || cm.Data["key"] != "v2" {
			t.Errorf("%s after the API server recovered: %q, %v; want v2", name, cm.Data["key"], err)
		}
	}
}

// filesOf is files(name) for every name, in one map.
func filesOf(names []string, files func(string) map[string]string) map[string]string {
	all := map[string]string{}
	for _, name := range names {
		for p, c := range files(name) {
			all[p] = c
		}
	}
	return all
}

// waitSyncedAt waits until every named Application is Synced at rev with a
// successful operation.
func waitSyncedAt(t *testing.T, names []string, rev string) {
	t.Helper()
	eventually(t, "Synced at "+rev, func() (bool, string) {
		return allApps(t, names, func(app *v1alpha1.Application) bool {
			st := app.Status.OperationState
			return app.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && app.Status.Sync.Revision == rev &&
				st != nil && st.Phase == v1alpha1.OperationSucceeded
		})
	})
}
