package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// readObject reads a testdata manifest and places it in namespace ns.
func readObject(t *testing.T, file, ns string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		t.Fatalf("decode %s: %v", file, err)
	}
	u.SetNamespace(ns)
	return u
}

// content is what an object round trip must keep: everything but the
// metadata the API server sets.
func content(t *testing.T, u *unstructured.Unstructured) map[string]any {
	t.Helper()
	c := map[string]any{
		"labels":      u.GetLabels(),
		"annotations": u.GetAnnotations(),
		"finalizers":  u.GetFinalizers(),
	}
	for _, k := range []string{"apiVersion", "kind", "spec", "status", "operation"} {
		c[k] = u.Object[k]
	}
	// One number type for values decoded from YAML (float64) and from the
	// API server (int64).
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func getUnstructured(t *testing.T, like *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(like.GroupVersionKind())
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(like), got); err != nil {
		t.Fatalf("get %s: %v", ref(like), err)
	}
	return got
}

// TestArgoCDObjectsRoundTrip creates Argo CD objects, including fields
// tollgate does not model, through the generated CRDs and reads them back:
// nothing may be pruned or changed. It also shows the CRDs have no status
// subresource, as in Argo CD: a status subresource would drop status on
// create.
func TestArgoCDObjectsRoundTrip(t *testing.T) {
	for _, file := range []string{
		"application-unmodelled-fields-kept.yaml",
		"appproject-unmodelled-fields-kept.yaml",
	} {
		t.Run(file, func(t *testing.T) {
			want := readObject(t, file, env.Namespace(t))
			if err := env.Client.Create(t.Context(), want.DeepCopy()); err != nil {
				t.Fatalf("create %s: %v", ref(want), err)
			}
			got := getUnstructured(t, want)
			if diff := gocmp.Diff(content(t, want), content(t, got)); diff != "" {
				t.Errorf("%s after create and get (-want +got):\n%s", ref(want), diff)
			}
		})
	}
}

// TestTypedReadAndPatch reads Argo CD objects into tollgate's Go types and
// changes them with a merge patch computed from the typed change, the way
// the engine writes status. Fields the types do not model must survive.
func TestTypedReadAndPatch(t *testing.T) {
	t.Run("application", func(t *testing.T) {
		want := readObject(t, "application-unmodelled-fields-kept.yaml", env.Namespace(t))
		if err := env.Client.Create(t.Context(), want.DeepCopy()); err != nil {
			t.Fatalf("create: %v", err)
		}
		app := &v1alpha1.Application{}
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(want), app); err != nil {
			t.Fatalf("get typed: %v", err)
		}
		type summary struct {
			Sources             int
			Chart, ValuesObject string
			Automated           bool
			RetryLimit          int64
			Phase               v1alpha1.OperationPhase
			Pruning             []string
			History             []int64
		}
		got := summary{
			Sources:   len(app.Sources()),
			Chart:     app.Spec.Source.Chart,
			Automated: app.Spec.SyncPolicy.Automated.IsEnabled(),
			Phase:     app.Status.OperationState.Phase,
		}
		got.ValuesObject = string(app.Spec.Source.Helm.ValuesObject.Raw)
		got.RetryLimit = app.Spec.SyncPolicy.Retry.Limit
		for _, r := range app.Status.Resources {
			if r.RequiresPruning {
				got.Pruning = append(got.Pruning, r.Kind+"/"+r.Name)
			}
		}
		for _, h := range app.Status.History {
			got.History = append(got.History, h.ID)
		}
		wantSummary := summary{
			Sources: 1, Chart: "billing", ValuesObject: `{"image":{"tag":"2.3.1"},"replicaCount":2}`,
			Automated: true, RetryLimit: -1, Phase: v1alpha1.OperationSucceeded,
			Pruning: []string{"PersistentVolumeClaim/data"}, History: []int64{7},
		}
		if diff := gocmp.Diff(wantSummary, got); diff != "" {
			t.Errorf("typed Application (-want +got):\n%s", diff)
		}

		before := app.DeepCopy()
		app.Status.Sync.Status = v1alpha1.SyncStatusCodeOutOfSync
		app.Status.Health = v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusDegraded, Message: "Deployment billing: 0/2 ready"}
		app.Status.Conditions = append(app.Status.Conditions, v1alpha1.ApplicationCondition{
			Type: v1alpha1.ApplicationConditionPolicyViolation, Message: "no-latest-tag: image ghcr.io/example/billing:latest",
		})
		if err := env.Client.Patch(t.Context(), app, client.MergeFrom(before)); err != nil {
			t.Fatalf("patch: %v", err)
		}
		set := func(v any, path ...string) {
			if err := unstructured.SetNestedField(want.Object, v, path...); err != nil {
				t.Fatal(err)
			}
		}
		set("OutOfSync", "status", "sync", "status")
		set(map[string]any{"status": "Degraded", "message": "Deployment billing: 0/2 ready"}, "status", "health")
		set([]any{map[string]any{"type": "PolicyViolation", "message": "no-latest-tag: image ghcr.io/example/billing:latest"}}, "status", "conditions")
		if diff := gocmp.Diff(content(t, want), content(t, getUnstructured(t, want))); diff != "" {
			t.Errorf("Application after typed patch (-want +got):\n%s", diff)
		}
	})

	t.Run("appproject", func(t *testing.T) {
		want := readObject(t, "appproject-unmodelled-fields-kept.yaml", env.Namespace(t))
		if err := env.Client.Create(t.Context(), want.DeepCopy()); err != nil {
			t.Fatalf("create: %v", err)
		}
		proj := &v1alpha1.AppProject{}
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(want), proj); err != nil {
			t.Fatalf("get typed: %v", err)
		}
		got := []string{
			proj.Spec.ClusterResourceWhitelist[0].Kind + "/" + proj.Spec.ClusterResourceWhitelist[0].Name,
			proj.Spec.Roles[0].JWTTokens[0].ID,
			proj.Spec.SyncWindows[0].TimeZone,
			proj.Status.JWTTokensByRole["ci"].Items[0].ID,
		}
		if diff := gocmp.Diff([]string{"ClusterRole/billing-*", "ci-token-1", "Europe/Paris", "ci-token-1"}, got); diff != "" {
			t.Errorf("typed AppProject (-want +got):\n%s", diff)
		}

		before := proj.DeepCopy()
		proj.Spec.SourceRepos = append(proj.Spec.SourceRepos, "https://git.example.com/billing/*")
		if err := env.Client.Patch(t.Context(), proj, client.MergeFrom(before)); err != nil {
			t.Fatalf("patch: %v", err)
		}
		if err := unstructured.SetNestedStringSlice(want.Object,
			[]string{"https://charts.example.com/stable", "https://git.example.com/billing/*"}, "spec", "sourceRepos"); err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(content(t, want), content(t, getUnstructured(t, want))); diff != "" {
			t.Errorf("AppProject after typed patch (-want +got):\n%s", diff)
		}
	})
}
