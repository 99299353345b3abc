// Package matchconditions measures what the shipped webhook configuration's
// match conditions cost the API server on a write, with the API server's
// own evaluator (k8s.io/apiserver's matchconditions.Matcher, as
// kube-apiserver v1.37 compiles and runs them), and checks what they
// decide. The peer is the same test written as four conditions, as tollgate
// shipped it before (testdata/four-conditions.yaml). It is a module of its
// own so that the API server's packages stay out of tollgate's build. Run
// it with `make bench-matchconditions`.
package matchconditions

import (
	"context"
	"os"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	celplugin "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"
)

// trackedHook is the index of tracked.tollgate.dev in the configuration.
const trackedHook = 2

// shipped reads the tracked webhook's conditions from the configuration.
func shipped(t testing.TB) []admissionregistrationv1.MatchCondition {
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	read(t, "../../../config/webhook/validating_webhook_configuration.yaml", &vwc)
	return vwc.Webhooks[trackedHook].MatchConditions
}

// fourConditions reads the peer.
func fourConditions(t testing.TB) []admissionregistrationv1.MatchCondition {
	var hook admissionregistrationv1.ValidatingWebhook
	read(t, "testdata/four-conditions.yaml", &hook)
	return hook.MatchConditions
}

func read(t testing.TB, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// matcher compiles conditions as the API server does for a validating
// webhook with failurePolicy.
func matcher(t testing.TB, conds []admissionregistrationv1.MatchCondition, failurePolicy admissionregistrationv1.FailurePolicyType) matchconditions.Matcher {
	t.Helper()
	exprs := make([]celplugin.ExpressionAccessor, len(conds))
	for i, c := range conds {
		exprs[i] = &matchconditions.MatchCondition{Name: c.Name, Expression: c.Expression}
	}
	compiler := celplugin.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	filter := compiler.CompileCondition(exprs, celplugin.OptionalVariableDeclarations{HasAuthorizer: true}, environment.StoredExpressions)
	for _, err := range filter.CompilationErrors() {
		t.Fatalf("compile: %v", err)
	}
	return matchconditions.NewMatcher(filter, &failurePolicy, "webhook", "validating", "tracked.tollgate.dev")
}

// write is one write the API server matches the tracked webhook's rules
// against: typed objects for built-in kinds, unstructured ones for custom
// resources, as the API server holds them.
type write struct {
	name        string
	gvk         schema.GroupVersionKind
	resource    string
	object, old runtime.Object
	// judged: the webhook is called.
	judged bool
}

// attributes builds what the API server hands the matcher.
func (w write) attributes() *admission.VersionedAttributes {
	meta := w.object.(metav1.Object)
	op := admission.Create
	if w.old != nil {
		op = admission.Update
	}
	attrs := admission.NewAttributesRecord(w.object, w.old, w.gvk, meta.GetNamespace(), meta.GetName(),
		w.gvk.GroupVersion().WithResource(w.resource), "", op, nil, false, &user.DefaultInfo{Name: "alice", Groups: []string{"system:authenticated"}})
	return &admission.VersionedAttributes{
		Attributes:         attrs,
		VersionedObject:    admission.NewLazyObject(w.object),
		VersionedOldObject: admission.NewLazyObject(w.old),
		VersionedKind:      w.gvk,
	}
}

func writes() []write {
	tracked := map[string]string{"app.kubernetes.io/instance": "web"}
	meta := func(ns, name string, labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: map[string]string{"team": "web"}}
	}
	configMap := func(labels map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: meta("web", "settings", labels), Data: map[string]string{"mode": "fast"}}
	}
	clusterRole := func(name string) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: meta("", name, tracked)}
	}
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"namespace": "argocd", "name": "web", "labels": map[string]any{"team": "web"}},
		"spec":     map[string]any{"project": "web", "destination": map[string]any{"namespace": "web"}},
	}}
	deployment := &appsv1.Deployment{ObjectMeta: meta("web", "api", tracked)}
	return []write{
		{name: "application", gvk: schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}, resource: "applications", object: app},
		{name: "tracked deployment", gvk: appsv1.SchemeGroupVersion.WithKind("Deployment"), resource: "deployments", object: deployment, old: deployment},
		{name: "untracked configmap", gvk: corev1.SchemeGroupVersion.WithKind("ConfigMap"), resource: "configmaps", object: configMap(nil), old: configMap(nil)},
		{name: "tracked configmap", gvk: corev1.SchemeGroupVersion.WithKind("ConfigMap"), resource: "configmaps", object: configMap(tracked), judged: true},
		{name: "configmap untracked by its update", gvk: corev1.SchemeGroupVersion.WithKind("ConfigMap"), resource: "configmaps", object: configMap(nil), old: configMap(tracked), judged: true},
		{name: "tracked lease", gvk: coordinationv1.SchemeGroupVersion.WithKind("Lease"), resource: "leases", object: &coordinationv1.Lease{ObjectMeta: meta("web", "lock", tracked)}},
		{name: "tracked event", gvk: corev1.SchemeGroupVersion.WithKind("Event"), resource: "events", object: &corev1.Event{ObjectMeta: meta("web", "api.1", tracked)}},
		{name: "tracked clusterrole", gvk: rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), resource: "clusterroles", object: clusterRole("web-reader"), judged: true},
		{name: "tracked clusterrole named tollgate", gvk: rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), resource: "clusterroles", object: clusterRole("tollgate"), judged: true},
		{name: "tollgate's clusterrole", gvk: rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), resource: "clusterroles", object: clusterRole("tollgate-webhook")},
	}
}

// TestShipped: the shipped condition decides every write without an
// error, under either failure policy.
func TestShipped(t *testing.T) {
	for _, fp := range []admissionregistrationv1.FailurePolicyType{admissionregistrationv1.Ignore, admissionregistrationv1.Fail} {
		m := matcher(t, shipped(t), fp)
		for _, w := range writes() {
			got := m.Match(context.Background(), w.attributes(), nil, nil)
			if got.Error != nil || got.Matches != w.judged || !got.Matches && got.FailedConditionName == "" {
				t.Errorf("%s, failurePolicy %s: judged %t (false condition %q, error %v), want judged %t with no error",
					w.name, fp, got.Matches, got.FailedConditionName, got.Error, w.judged)
			}
		}
	}
}

// TestFourConditions: the peer decides the same but for the writes its
// not-tollgate condition errs on, which failurePolicy Fail refuses.
func TestFourConditions(t *testing.T) {
	m := matcher(t, fourConditions(t), admissionregistrationv1.Fail)
	for _, w := range writes() {
		got := m.Match(context.Background(), w.attributes(), nil, nil)
		if w.name == "tollgate's clusterrole" {
			if got.Error == nil {
				t.Errorf("%s: no error, want the peer's error on request.namespace", w.name)
			}
			continue
		}
		if got.Error != nil || got.Matches != w.judged {
			t.Errorf("%s: judged %t (error %v), want %t", w.name, got.Matches, got.Error, w.judged)
		}
	}
}

// BenchmarkConditions: one match of each write, the shipped condition
// beside the peer.
func BenchmarkConditions(b *testing.B) {
	ways := []struct {
		name  string
		conds []admissionregistrationv1.MatchCondition
	}{{"shipped", shipped(b)}, {"four-conditions", fourConditions(b)}}
	for _, w := range writes() {
		for _, way := range ways {
			m := matcher(b, way.conds, admissionregistrationv1.Ignore)
			b.Run(w.name+"/"+way.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					m.Match(context.Background(), w.attributes(), nil, nil)
				}
			})
		}
	}
}
