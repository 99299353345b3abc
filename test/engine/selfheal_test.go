package engine_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestSelfHealFromWatches: on the strict engine, whose resync is 10
// minutes, a live edit of a tracked object is healed within seconds: the
// change of the live object requests the comparison. As Argo CD, the heal
// is a selective sync of what drifted (no history entry) that counts
// autoHealAttemptsCount, and the next heal in a row waits for the
// self-heal backoff (2s after the previous one).
func TestSelfHealFromWatches(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	f.cp = strictNS
	f.create(repositorySecret(strictNS, f.name, map[string]string{"url": f.repoURL, "insecure": "true"}))
	f.application(automated(true, true), nil)
	synced := f.waitSynced(f.head)
	history := len(synced.Status.History)

	edit := func(n int) time.Time {
		t.Helper()
		var cm corev1.ConfigMap
		if err := f.get(&cm, "settings"); err != nil {
			t.Fatal(err)
		}
		patch := client.RawPatch(types.MergePatchType, []byte(`{"data":{"key":"edited by hand"}}`))
		if err := env.Client.Patch(t.Context(), &cm, patch); err != nil {
			t.Fatal(err)
		}
		at := time.Now()
		healed := f.waitApp("the live edit is healed", func(a *v1alpha1.Application) bool {
			st := a.Status.OperationState
			return st != nil && st.Phase == v1alpha1.OperationSucceeded && st.Operation.Sync != nil && st.Operation.Sync.SelfHealAttemptsCount == int64(n)
		})
		took := time.Since(at)
		if took > 10*time.Second {
			t.Errorf("heal %d took %s, want under 10s", n, took)
		}
		if err := f.get(&cm, "settings"); err != nil || cm.Data["key"] != "v1" {
			t.Errorf("configmap after heal %d: %v %v", n, cm.Data, err)
		}
		res := healed.Status.OperationState.Operation.Sync.Resources
		if len(res) != 1 || res[0].Kind != "ConfigMap" || res[0].Name != "settings" {
			t.Errorf("heal %d synced %+v, want only the edited ConfigMap", n, res)
		}
		if len(healed.Status.History) != history {
			t.Errorf("heal %d added a history entry; Argo CD records selective syncs nowhere", n)
		}
		return healed.Status.OperationState.FinishedAt.Time
	}
	first := edit(1)
	edit(2)
	second := f.app().Status.OperationState.StartedAt.Time
	if gap := second.Sub(first); gap < 2*time.Second {
		t.Errorf("second heal started %s after the first finished, want the 2s backoff", gap)
	}

	// A status-only change (the deployment controller's) is no drift and
	// requests nothing; a spec change does.
	var dep appsv1.Deployment
	if err := f.get(&dep, "web"); err != nil {
		t.Fatal(err)
	}
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":5}}`))
	if err := env.Client.Patch(t.Context(), &dep, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deployment's replicas healed", func() (bool, string) {
		if err := f.get(&dep, "web"); err != nil {
			return false, err.Error()
		}
		return *dep.Spec.Replicas == 2, fmt.Sprintf("replicas %d", *dep.Spec.Replicas)
	})
}
