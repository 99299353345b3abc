package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestSkipReconcile: an Application annotated
// argocd.argoproj.io/skip-reconcile: "true" is left alone, as Argo CD's
// controller leaves it: no status, nothing applied; removing the
// annotation brings it back.
func TestSkipReconcile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	f.application(automated(true, false), func(a *v1alpha1.Application) {
		a.Annotations = map[string]string{v1alpha1.AnnotationKeyAppSkipReconcile: "true"}
	})
	consistently(t, "the skipped Application is not reconciled", 3*time.Second, func() (bool, string) {
		app := f.app()
		var cm corev1.ConfigMap
		applied := f.get(&cm, "settings") == nil
		return app.Status.ReconciledAt == nil && app.Status.Sync.Status == "" && !applied,
			fmt.Sprintf("%s; configmap applied: %v", describeApp(app), applied)
	})
	edit(t, f.app(), func(a *v1alpha1.Application) { delete(a.Annotations, v1alpha1.AnnotationKeyAppSkipReconcile) })
	f.waitSynced(f.head)
}

// TestSingleWaveSyncEndsWhenApplied: Argo CD's jsonnet-guestbook on a
// cluster without a load balancer. A sync without waves or hooks ends
// once its objects are applied: the operation Succeeded and the
// Application Synced, its health Progressing while the LoadBalancer
// Service has no address, where the sync used to wait for it until its
// timeout.
func TestSingleWaveSyncEndsWhenApplied(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		"manifests/configmap.yaml": configMap("settings", "v1"),
		"manifests/service.yaml":   loadBalancerFront,
	})
	f.application(automated(true, false), nil)
	app := f.waitApp("synced with the Service still progressing", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return st != nil && st.Phase == v1alpha1.OperationSucceeded && a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	if app.Status.Health.Status != v1alpha1.HealthStatusProgressing {
		t.Errorf("health = %s (%s), want Progressing: the Service has no load balancer", app.Status.Health.Status, app.Status.Health.Message)
	}
}

// TestCompareOptionsIgnoreExtraneous: a live object annotated
// argocd.argoproj.io/compare-options: IgnoreExtraneous that Git no longer
// holds awaits pruning (shown OutOfSync) without making the Application
// OutOfSync, as in Argo CD.
func TestCompareOptionsIgnoreExtraneous(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	f.application(automated(false, false), nil)
	f.waitSynced(f.head)
	var cm corev1.ConfigMap
	if err := f.get(&cm, "settings"); err != nil {
		t.Fatal(err)
	}
	edit(t, &cm, func(c *corev1.ConfigMap) {
		c.Annotations[v1alpha1.AnnotationKeyCompareOptions] = "IgnoreExtraneous"
	})
	sha := f.push(nil, []string{"manifests/configmap.yaml"}, "drop settings")
	app := f.waitApp("Synced at the new commit, settings awaiting pruning", func(a *v1alpha1.Application) bool {
		if a.Status.Sync.Revision != sha {
			return false
		}
		for _, r := range a.Status.Resources {
			if r.Kind == "ConfigMap" && r.Name == "settings" {
				return r.RequiresPruning && r.Status == v1alpha1.SyncStatusCodeOutOfSync
			}
		}
		return false
	})
	if app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
		t.Errorf("sync status = %s, want Synced: the extraneous ConfigMap is ignored", app.Status.Sync.Status)
	}
}

// TestUnsupportedFieldsRefused: Argo CD fields tollgate does not honour
// refuse the Application by name (InvalidSpecError) rather than be
// ignored: a project relying on sourceIntegrity is not silently open.
func TestUnsupportedFieldsRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		app     func(*v1alpha1.Application)
		project func(*v1alpha1.AppProject)
		want    string
	}{
		{name: "source hydrator", app: func(a *v1alpha1.Application) {
			a.Spec.SourceHydrator = &runtime.RawExtension{Raw: []byte(`{"drySource":{"repoURL":"https://example.com/x"}}`)}
		}, want: "spec.sourceHydrator is not supported"},
		{name: "retry refresh", app: func(a *v1alpha1.Application) {
			a.Spec.SyncPolicy.Retry.Refresh = true
		}, want: "spec.syncPolicy.retry.refresh is not supported"},
		{name: "project source integrity", project: func(p *v1alpha1.AppProject) {
			p.Spec.SourceIntegrity = &runtime.RawExtension{Raw: []byte(`{"git":{"policies":[]}}`)}
		}, want: "spec.sourceIntegrity is not supported"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, baseFiles())
			f.editProject = tt.project
			f.application(automated(true, false), tt.app)
			f.waitApp("refused by name", func(a *v1alpha1.Application) bool {
				msg, ok := condition(a, v1alpha1.ApplicationConditionInvalidSpecError)
				return ok && strings.Contains(msg, tt.want)
			})
			var cm corev1.ConfigMap
			if err := f.get(&cm, "settings"); err == nil {
				t.Error("the refused Application was synced")
			}
		})
	}
}

// TestRunningSyncShowsProgress: while a wave waits for health, the
// Application shows it, as Argo CD does: the operation says what it waits
// for, and the objects already applied are Synced with their health in
// status.resources instead of the Missing of the comparison before.
func TestRunningSyncShowsProgress(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		"manifests/service.yaml": loadBalancerFront,
		"manifests/after.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: after
  annotations: {argocd.argoproj.io/sync-wave: "1"}
data: {k: v}
`,
	})
	f.application(automated(true, false), nil)
	f.waitApp("waiting for the Service, shown applied", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		if st == nil || st.Phase != v1alpha1.OperationRunning || st.Message != "waiting for healthy state of /Service/front" {
			return false
		}
		for _, r := range a.Status.Resources {
			if r.Kind == "Service" && r.Name == "front" {
				return r.Status == v1alpha1.SyncStatusCodeSynced && r.Health != nil && r.Health.Status == v1alpha1.HealthStatusProgressing
			}
		}
		return false
	})
	// The load balancer comes: wave 1 is applied and the sync ends.
	var svc corev1.Service
	if err := f.get(&svc, "front"); err != nil {
		t.Fatal(err)
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.10"}}
	if err := env.Client.Status().Update(t.Context(), &svc); err != nil {
		t.Fatal(err)
	}
	f.waitApp("synced once the Service is healthy", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return st != nil && st.Phase == v1alpha1.OperationSucceeded && a.Status.Health.Status == v1alpha1.HealthStatusHealthy
	})
}

// loadBalancerFront is a LoadBalancer Service: Progressing for as long as
// no load balancer gives it an address, as on a cluster without one.
const loadBalancerFront = `apiVersion: v1
kind: Service
metadata:
  name: front
spec:
  type: LoadBalancer
  selector: {app: front}
  ports: [{port: 80}]
`
