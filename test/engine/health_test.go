package engine_test

import (
	"strings"
	"testing"

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
