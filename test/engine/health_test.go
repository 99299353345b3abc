package engine_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestLuaHealthFromArgoCDConfigMap judges a custom resource with the Lua
// health check of argocd-cm, read live: the Application's health follows
// the script as the object changes, then the script's own change.
func TestLuaHealthFromArgoCDConfigMap(t *testing.T) {
	const group = "lua.tollgate.test"
	f := newFixture(t, map[string]string{
		"manifests/widget.yaml": "apiVersion: " + group + "/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 1}\nstatus: {ready: true}\n",
	})
	def := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(widgetCRD(group)), &def.Object); err != nil {
		t.Fatal(err)
	}
	f.create(def)
	eventually(t, "the Widget kind is served", func() (bool, string) {
		var l unstructured.UnstructuredList
		l.SetAPIVersion(group + "/v1")
		l.SetKind("WidgetList")
		err := env.Client.List(t.Context(), &l, client.InNamespace(f.ns))
		return err == nil, "list widgets"
	})
	key := "resource.customizations.health." + group + "_Widget"
	script := `if obj.status ~= nil and obj.status.ready then
  return {status = "Healthy", message = "widget ready"}
end
return {status = "Progressing", message = "widget " .. obj.metadata.name .. " not ready"}`
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: f.cp},
		Data:       map[string]string{key: script},
	}
	f.create(cm)
	f.application(&v1alpha1.SyncPolicyAutomated{}, nil)
	f.waitApp("Healthy by the argocd-cm script", func(a *v1alpha1.Application) bool {
		for _, r := range a.Status.Resources {
			if r.Kind == "Widget" && r.Health != nil && r.Health.Status == v1alpha1.HealthStatusHealthy && r.Health.Message == "widget ready" {
				return a.Status.Health.Status == v1alpha1.HealthStatusHealthy
			}
		}
		return false
	})
	w := &unstructured.Unstructured{}
	w.SetAPIVersion(group + "/v1")
	w.SetKind("Widget")
	w.SetNamespace(f.ns)
	w.SetName("w1")
	if err := env.Client.Patch(t.Context(), w, client.RawPatch(types.MergePatchType, []byte(`{"status":{"ready":false}}`))); err != nil {
		t.Fatal(err)
	}
	f.waitApp("Progressing once the script sees status.ready false", func(a *v1alpha1.Application) bool {
		return a.Status.Health.Status == v1alpha1.HealthStatusProgressing && strings.Contains(a.Status.Health.Message, "widget w1 not ready")
	})
	cm.Data[key] = `return {status = "Degraded", message = "script changed"}`
	if err := env.Client.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	f.waitApp("Degraded by the changed script", func(a *v1alpha1.Application) bool {
		return a.Status.Health.Status == v1alpha1.HealthStatusDegraded && strings.Contains(a.Status.Health.Message, "script changed")
	})
}

// TestArgoCDConfigMapSettings applies argocd-cm's system-level
// ignoreDifferences and resource exclusions: an excluded kind in Git is
// neither applied nor compared (a warning names it), and drift in an
// ignored field keeps the Application Synced while other drift does not.
func TestArgoCDConfigMapSettings(t *testing.T) {
	f := newFixture(t, map[string]string{
		"manifests/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: \"1\", skip: \"git\"}\n",
		"manifests/widget.yaml":   "apiVersion: excl.tollgate.test/v1\nkind: Widget\nmetadata: {name: w1}\n",
	})
	f.create(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: f.cp},
		Data: map[string]string{
			"resource.exclusions": "- apiGroups: [excl.tollgate.test]\n  kinds: [Widget]\n",
			"resource.customizations.ignoreDifferences.ConfigMap": "jsonPointers: [/data/skip]\n",
		},
	})
	f.application(&v1alpha1.SyncPolicyAutomated{}, nil)
	app := f.waitSynced(f.head)
	msg, ok := condition(app, v1alpha1.ApplicationConditionExcludedResourceWarning)
	if !ok || !strings.Contains(msg, "Widget") {
		t.Errorf("ExcludedResourceWarning = %q (set %v), want it to name the Widget", msg, ok)
	}
	for _, r := range app.Status.Resources {
		if r.Kind == "Widget" {
			t.Errorf("the excluded Widget is in status.resources: %+v", r)
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: f.ns}}
	if err := env.Client.Patch(t.Context(), cm, client.RawPatch(types.MergePatchType, []byte(`{"data":{"skip":"edited"}}`))); err != nil {
		t.Fatal(err)
	}
	consistently(t, "Synced despite drift in an ignored field", 6*time.Second, func() (bool, string) {
		a := f.app()
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced, describeApp(a)
	})
	if err := env.Client.Patch(t.Context(), cm, client.RawPatch(types.MergePatchType, []byte(`{"data":{"a":"2"}}`))); err != nil {
		t.Fatal(err)
	}
	f.waitApp("OutOfSync on drift in a compared field", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})
}
