package engine_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// lastApplied is kubectl's record of a client-side apply.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// dataConfigMap is ConfigMap name holding data, as a manifest.
func dataConfigMap(name string, data map[string]string) string {
	b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": data})
	return string(b) + "\n"
}

// kubectlApply creates ConfigMap name holding data in ns as a client-side
// `kubectl apply` does: a create by the kubectl-client-side-apply field
// manager (an Update entry of managedFields) carrying the manifest in the
// last-applied annotation.
func kubectlApply(t *testing.T, f *fixture, name string, data map[string]string) {
	t.Helper()
	manifest, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": f.ns}, "data": data})
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Annotations: map[string]string{lastApplied: string(manifest)}},
		Data:       data,
	}
	if err := env.Client.Create(t.Context(), cm, client.FieldOwner("kubectl-client-side-apply")); err != nil {
		t.Fatalf("kubectl apply %s: %v", name, err)
	}
}

// managers returns the field managers of obj with their operations.
func managers(obj client.Object) []string {
	var out []string
	for _, e := range obj.GetManagedFields() {
		out = append(out, e.Manager+"/"+string(e.Operation))
	}
	slices.Sort(out)
	return out
}

// TestTrackingAdoptsClientSideApplied: objects created by a client-side
// `kubectl apply` are adopted by an Application; with Argo CD's default
// ClientSideApplyMigration, kubectl's fields move to tollgate's field
// manager, so a key kubectl applied and Git no longer has is gone after the
// sync, and with ClientSideApplyMigration=false it stays, owned by kubectl.
// A ConfigMap that only carries the Application's instance label (as Helm
// charts set it) is not the Application's under annotation tracking, and is
// not pruned.
func TestTrackingAdoptsClientSideApplied(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		options  []string
		data     map[string]string
		managers []string
		note     string
	}{{
		name:     "ClientSideApplyMigration by default",
		data:     map[string]string{"kept": "1"},
		managers: []string{"tollgate/Apply"},
		note:     "configured; fields of kubectl-client-side-apply moved to tollgate (ClientSideApplyMigration)",
	}, {
		name:     "ClientSideApplyMigration=false",
		options:  []string{"ClientSideApplyMigration=false"},
		data:     map[string]string{"kept": "1", "removed": "2"},
		managers: []string{"kubectl-client-side-apply/Update", "tollgate/Apply"},
		note:     "configured",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, map[string]string{"manifests/settings.yaml": dataConfigMap("settings", map[string]string{"kept": "1"})})
			kubectlApply(t, f, "settings", map[string]string{"kept": "1", "removed": "2"})
			release := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "release", Namespace: f.ns, Labels: map[string]string{v1alpha1.LabelKeyAppInstance: f.name}}}
			f.create(release)
			f.application(automated(true, false), func(a *v1alpha1.Application) {
				a.Spec.SyncPolicy.SyncOptions = tc.options
			})
			app := f.waitSynced(f.head)

			var cm corev1.ConfigMap
			if err := f.get(&cm, "settings"); err != nil {
				t.Fatalf("configmap settings: %v", err)
			}
			if diff := cmp.Diff(tc.data, cm.Data); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.managers, managers(&cm)); diff != "" {
				t.Errorf("field managers (-want +got):\n%s", diff)
			}
			if want := fmt.Sprintf("%s:/ConfigMap:%s/settings", f.name, f.ns); cm.Annotations[v1alpha1.AnnotationKeyTrackingID] != want {
				t.Errorf("tracking id %q, want %q", cm.Annotations[v1alpha1.AnnotationKeyTrackingID], want)
			}
			if _, ok := cm.Annotations[lastApplied]; ok == (tc.options == nil) {
				t.Errorf("last-applied annotation present: %v, want %v", ok, tc.options != nil)
			}
			if msg := resultMessage(app, "ConfigMap", "settings"); msg != tc.note {
				t.Errorf("result message %q, want %q", msg, tc.note)
			}
			if err := f.get(&corev1.ConfigMap{}, "release"); err != nil {
				t.Errorf("configmap release, labelled with the application's instance: %v, want it kept (annotation tracking)", err)
			}
		})
	}
}

// TestTrackingAdoptsLabelTracked: with annotation+label tracking, objects
// an Argo CD with label tracking left (the instance label only, fields
// owned by argocd-controller's server-side apply) are the Application's: the
// one still in Git is applied, gets the tracking annotation, and loses the
// key Git no longer has, which argocd-controller owned; the one no longer
// in Git is pruned. Another Application's labelled object, and a labelled
// object owned by another object (a Pod of a ReplicaSet would be), are
// left alone.
func TestTrackingAdoptsLabelTracked(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"manifests/settings.yaml": dataConfigMap("settings", map[string]string{"kept": "1"})})
	f.cp = trackingNS
	argoApply := func(name, instance string, data map[string]string, owners ...metav1.OwnerReference) {
		t.Helper()
		cm := &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: map[string]string{v1alpha1.LabelKeyAppInstance: instance},
				OwnerReferences: owners},
			Data: data,
		}
		if err := env.Client.Patch(t.Context(), cm, client.Apply, client.FieldOwner("argocd-controller"), client.ForceOwnership); err != nil {
			t.Fatalf("apply %s as argocd-controller: %v", name, err)
		}
	}
	argoApply("settings", f.name, map[string]string{"kept": "1", "removed": "2"})
	argoApply("leftover", f.name, map[string]string{"x": "1"})
	argoApply("others", "other-app", map[string]string{"x": "1"})
	var settings corev1.ConfigMap
	if err := f.get(&settings, "settings"); err != nil {
		t.Fatalf("configmap settings: %v", err)
	}
	argoApply("child", f.name, map[string]string{"x": "1"}, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "settings", UID: settings.UID})
	f.application(automated(true, false), nil)
	app := f.waitSynced(f.head)

	if err := f.get(&settings, "settings"); err != nil {
		t.Fatalf("configmap settings: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"kept": "1"}, settings.Data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tollgate/Apply"}, managers(&settings)); diff != "" {
		t.Errorf("field managers (-want +got):\n%s", diff)
	}
	wantID := fmt.Sprintf("%s:/ConfigMap:%s/settings", f.name, f.ns)
	if got := [2]string{settings.Annotations[v1alpha1.AnnotationKeyTrackingID], settings.Labels[v1alpha1.LabelKeyAppInstance]}; got != [2]string{wantID, f.name} {
		t.Errorf("tracking annotation and label %q, want %q", got, [2]string{wantID, f.name})
	}
	if msg := resultMessage(app, "ConfigMap", "settings"); msg != "configured; fields of argocd-controller moved to tollgate (ClientSideApplyMigration)" {
		t.Errorf("result message %q", msg)
	}
	if msg := resultMessage(app, "ConfigMap", "leftover"); msg != "pruned" {
		t.Errorf("leftover: result message %q, want pruned", msg)
	}
	eventually(t, "leftover pruned", func() (bool, string) { return f.gone(&corev1.ConfigMap{}, "leftover") })
	for _, name := range []string{"others", "child"} {
		if err := f.get(&corev1.ConfigMap{}, name); err != nil {
			t.Errorf("configmap %s: %v, want it kept", name, err)
		}
	}
	for _, r := range app.Status.Resources {
		if r.Name == "others" || r.Name == "child" {
			t.Errorf("status lists %s/%s, which is not the application's", r.Kind, r.Name)
		}
	}
}
