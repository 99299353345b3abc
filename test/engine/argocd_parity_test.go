package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// keptConfigMap is a ConfigMap with Helm's keep policy.
func keptConfigMap(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  annotations:
    helm.sh/resource-policy: keep
data:
  key: kept
`, name)
}

// annotatedConfigMap is a ConfigMap with one annotation.
func annotatedConfigMap(name, key, value string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  annotations:
    %s: %q
data:
  key: v
`, name, key, value)
}

// widgetCRD is a CustomResourceDefinition of kind Widget in group group.
func widgetCRD(group string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.%[1]s
spec:
  group: %[1]s
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group)
}

// TestCascadeDeleteKeepsWhatArgoCDKeeps: deleting an Application with the
// resources finalizer deletes what it tracks except what Argo CD keeps: a
// CustomResourceDefinition (its deletion would take every custom resource
// of the kind with it), an object with helm.sh/resource-policy: keep, and
// objects whose Delete option is false, from their own annotation or, when
// they have none, from the Application's syncOptions.
func TestCascadeDeleteKeepsWhatArgoCDKeeps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		appOpts     []string
		kept, ended []string
	}{
		{name: "defaults", kept: []string{"kept", "no-delete"}, ended: []string{"plain", "delete-true"}},
		{name: "Delete=false for the application", appOpts: []string{"Delete=false"}, kept: []string{"kept", "no-delete", "plain"}, ended: []string{"delete-true"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			group := fmt.Sprintf("cascade%d.tollgate.test", i)
			f := newFixture(t, map[string]string{
				"manifests/crd.yaml":         widgetCRD(group),
				"manifests/kept.yaml":        keptConfigMap("kept"),
				"manifests/plain.yaml":       configMap("plain", "v"),
				"manifests/no-delete.yaml":   annotatedConfigMap("no-delete", "argocd.argoproj.io/sync-options", "Delete=false"),
				"manifests/delete-true.yaml": annotatedConfigMap("delete-true", "argocd.argoproj.io/sync-options", "Delete=true"),
			})
			f.editProject = permitCRDs
			f.application(automated(true, false), func(a *v1alpha1.Application) {
				a.Finalizers = []string{v1alpha1.ResourcesFinalizerName}
				a.Spec.SyncPolicy.SyncOptions = tc.appOpts
			})
			f.waitSynced(f.head)
			if err := env.Client.Delete(t.Context(), f.app()); err != nil {
				t.Fatalf("delete application: %v", err)
			}
			eventually(t, "application gone", func() (bool, string) {
				var app v1alpha1.Application
				err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: argoNS, Name: f.name}, &app)
				return client.IgnoreNotFound(err) == nil && err != nil, fmt.Sprintf("still there: %v", err)
			})
			for _, name := range tc.ended {
				if gone, why := f.gone(&corev1.ConfigMap{}, name); !gone {
					t.Errorf("configmap %s: %s", name, why)
				}
			}
			for _, name := range tc.kept {
				if gone, _ := f.gone(&corev1.ConfigMap{}, name); gone {
					t.Errorf("configmap %s was deleted; Argo CD keeps it", name)
				}
			}
			def := &unstructured.Unstructured{}
			def.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
			if err := env.Client.Get(t.Context(), types.NamespacedName{Name: "widgets." + group}, def); err != nil || def.GetDeletionTimestamp() != nil {
				t.Errorf("the CustomResourceDefinition was deleted (err %v); Argo CD never deletes CRDs in a cascade", err)
			}
		})
	}
}

// TestAppLevelPruneOptions: Prune=false and PruneLast=true in the
// Application's syncOptions apply to every object, and an object's own
// sync-options annotation overrides them, as in Argo CD.
func TestAppLevelPruneOptions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		"manifests/plain.yaml":      configMap("plain", "v"),
		"manifests/prune-true.yaml": annotatedConfigMap("prune-true", "argocd.argoproj.io/sync-options", "Prune=true"),
		"manifests/stays.yaml":      configMap("stays", "v"),
	})
	f.application(automated(true, false), func(a *v1alpha1.Application) {
		a.Spec.SyncPolicy.SyncOptions = []string{"Prune=false"}
	})
	f.waitSynced(f.head)
	sha := f.push(nil, []string{"manifests/plain.yaml", "manifests/prune-true.yaml"}, "drop two")
	eventually(t, "the object whose annotation says Prune=true is pruned", func() (bool, string) {
		return f.gone(&corev1.ConfigMap{}, "prune-true")
	})
	f.waitApp("plain awaits pruning, skipped by the application's Prune=false", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		if st == nil || st.SyncResult == nil || st.SyncResult.Revision != sha {
			return false
		}
		for _, r := range st.SyncResult.Resources {
			if r.Name == "plain" && r.Status == v1alpha1.ResultCodePruneSkipped && strings.Contains(r.Message, "Prune=false") {
				return true
			}
		}
		return false
	})
	if gone, _ := f.gone(&corev1.ConfigMap{}, "plain"); gone {
		t.Error("configmap plain was pruned despite the application's Prune=false")
	}
}

// TestHooksAsArgoCD: a Skip resource is neither applied nor compared (the
// Application stays Synced, so selfHeal does not loop); a PreDelete hook
// does not fail the sync (it belongs to the Application's deletion); hook
// types and delete policies Argo CD does not know are ignored, named in an
// UnknownHookWarning condition, and an object left with no known hook type
// is left out like Skip.
func TestHooksAsArgoCD(t *testing.T) {
	t.Parallel()
	files := baseFiles()
	files["manifests/skipped.yaml"] = annotatedConfigMap("skipped", "argocd.argoproj.io/hook", "Skip")
	files["manifests/typo.yaml"] = annotatedConfigMap("typo", "argocd.argoproj.io/hook", "PreSynk")
	files["manifests/pre-delete.yaml"] = `apiVersion: batch/v1
kind: Job
metadata:
  name: cleanup
  annotations:
    argocd.argoproj.io/hook: PreDelete
    argocd.argoproj.io/hook-delete-policy: HookSucceeded,Sometimes
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: registry.example.com/cleanup:1.0.0}]
`
	f := newFixture(t, files)
	f.application(automated(true, true), nil)
	app := f.waitSynced(f.head)
	if app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
		t.Errorf("sync status %s, want Synced", app.Status.Sync.Status)
	}
	msg, ok := condition(app, v1alpha1.ApplicationConditionUnknownHookWarning)
	if !ok || !strings.Contains(msg, `argocd.argoproj.io/hook: PreSynk is ignored`) || !strings.Contains(msg, "hook-delete-policy: Sometimes is ignored") {
		t.Errorf("UnknownHookWarning = %q (present %v), want it to name PreSynk and Sometimes", msg, ok)
	}
	for _, name := range []string{"skipped", "typo"} {
		if gone, _ := f.gone(&corev1.ConfigMap{}, name); !gone {
			t.Errorf("configmap %s was applied; Argo CD leaves it out", name)
		}
		for _, r := range app.Status.Resources {
			if r.Name == name {
				t.Errorf("configmap %s is compared: %+v", name, r)
			}
		}
	}
	consistently(t, "still Synced, no further sync", 3*resync, func() (bool, string) {
		a := f.app()
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.OperationState.SyncResult.Revision == f.head, describeApp(a)
	})
}

// TestDeleteConfirmWaitsForApproval: with an object marked Delete=confirm,
// deleting the Application deletes nothing until the deletion is approved
// (argocd.argoproj.io/deletion-approved at or after the deletion, what
// tollgate app confirm-deletion sets), then everything it tracks.
func TestDeleteConfirmWaitsForApproval(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{
		"manifests/plain.yaml":   configMap("plain", "v"),
		"manifests/confirm.yaml": annotatedConfigMap("confirm", "argocd.argoproj.io/sync-options", "Delete=confirm"),
	})
	f.application(automated(true, false), func(a *v1alpha1.Application) {
		a.Finalizers = []string{v1alpha1.ResourcesFinalizerName}
		// An approval older than the deletion does not count.
		a.Annotations = map[string]string{v1alpha1.AnnotationKeyDeletionApproved: "2020-01-01T00:00:00Z"}
	})
	f.waitSynced(f.head)
	if err := env.Client.Delete(t.Context(), f.app()); err != nil {
		t.Fatalf("delete application: %v", err)
	}
	consistently(t, "nothing deleted before the approval", 3*resync, func() (bool, string) {
		for _, name := range []string{"plain", "confirm"} {
			if gone, _ := f.gone(&corev1.ConfigMap{}, name); gone {
				return false, "configmap " + name + " was deleted"
			}
		}
		return true, ""
	})
	app := f.app()
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`,
		v1alpha1.AnnotationKeyDeletionApproved, time.Now().UTC().Format(time.RFC3339))))
	if err := env.Client.Patch(t.Context(), app, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "application and resources gone after the approval", func() (bool, string) {
		var a v1alpha1.Application
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: argoNS, Name: f.name}, &a)
		if client.IgnoreNotFound(err) != nil || err == nil {
			return false, fmt.Sprintf("application still there: %v", err)
		}
		for _, name := range []string{"plain", "confirm"} {
			if gone, why := f.gone(&corev1.ConfigMap{}, name); !gone {
				return false, why
			}
		}
		return true, ""
	})
}

// TestSyncRetry: an automated sync that fails is retried as Argo CD
// retries it: the operation stays Running with its retry count and the time
// of the next attempt, and a retry after the cause is gone succeeds. The
// failure is a custom resource whose CRD is not installed yet.
func TestSyncRetry(t *testing.T) {
	t.Parallel()
	group := "retry.tollgate.test"
	f := newFixture(t, map[string]string{
		"manifests/widget.yaml": fmt.Sprintf("apiVersion: %s/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 1}\n", group),
	})
	one := int64(1)
	f.application(automated(false, false), func(a *v1alpha1.Application) {
		a.Spec.SyncPolicy.Retry = &v1alpha1.RetryStrategy{Limit: -1, Backoff: &v1alpha1.Backoff{Duration: "2s", Factor: &one}}
	})
	f.waitApp("the failed sync waits for its retry", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return st != nil && st.Phase == v1alpha1.OperationRunning && st.RetryCount >= 1 &&
			strings.Contains(st.Message, "Retrying attempt #") && a.Operation != nil && a.Operation.InitiatedBy.Automated
	})
	def := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(widgetCRD(group)), &def.Object); err != nil {
		t.Fatal(err)
	}
	f.create(def)
	app := f.waitApp("a retry succeeds once the CRD exists", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return st != nil && st.Phase == v1alpha1.OperationSucceeded && a.Operation == nil
	})
	if st := app.Status.OperationState; st.RetryCount < 1 {
		t.Errorf("retry count %d after a retried sync, want at least 1", st.RetryCount)
	}
}

// TestSyncWindows: an active deny window of the AppProject holds back an
// automated sync (SyncError says why) and a manual one (its operation waits,
// Running with the reason) unless the window has manualSync; once the
// window is gone, both run.
func TestSyncWindows(t *testing.T) {
	t.Parallel()
	deny := v1alpha1.SyncWindow{Kind: "deny", Schedule: "* * * * *", Duration: "1h", Applications: []string{"*"}, Description: "change freeze"}
	f := newFixture(t, baseFiles())
	f.editProject = func(p *v1alpha1.AppProject) { p.Spec.SyncWindows = []v1alpha1.SyncWindow{deny} }
	f.application(automated(true, false), nil)
	f.waitApp("the automated sync is held back by the deny window", func(a *v1alpha1.Application) bool {
		msg, ok := condition(a, v1alpha1.ApplicationConditionSyncError)
		return ok && strings.Contains(msg, "change freeze") && a.Status.OperationState == nil
	})
	if img := f.deploymentImage("web"); img != "" {
		t.Fatalf("deployment web applied during the freeze")
	}
	edit(t, f.app(), func(app *v1alpha1.Application) {
		app.Spec.SyncPolicy.Automated = nil
		app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}}
	})
	f.waitApp("the manual sync waits, Running with the reason", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return a.Operation != nil && st != nil && st.Phase == v1alpha1.OperationRunning && strings.Contains(st.Message, "change freeze")
	})
	var proj v1alpha1.AppProject
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: f.cp, Name: f.name}, &proj); err != nil {
		t.Fatal(err)
	}
	proj.Spec.SyncWindows = nil
	if err := env.Client.Update(t.Context(), &proj); err != nil {
		t.Fatal(err)
	}
	f.waitApp("the manual sync runs once the window is gone", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		_, blocked := condition(a, v1alpha1.ApplicationConditionSyncError)
		return a.Operation == nil && st != nil && st.Phase == v1alpha1.OperationSucceeded && !blocked
	})
}

// TestTerminateOperation: an operation held back by a sync window ends
// when it is asked to terminate (as tollgate app terminate-op does): Failed,
// "Operation terminated", and cleared.
func TestTerminateOperation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	app := f.operationHeldByWindow()
	patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"operationState":{"phase":"Terminating"}}}`))
	if err := env.Client.Patch(t.Context(), app, patch); err != nil {
		t.Fatal(err)
	}
	f.waitApp("the operation ended as terminated", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return a.Operation == nil && st != nil && st.Phase == v1alpha1.OperationFailed && st.Message == "Operation terminated"
	})
	if img := f.deploymentImage("web"); img != "" {
		t.Errorf("deployment web applied by a terminated operation")
	}
}
