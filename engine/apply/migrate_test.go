package apply

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
)

// entry is a managedFields entry of manager with operation op owning the
// fieldsV1 tree fields.
func entry(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

// managed is a ConfigMap with the given managedFields, resourceVersion 7.
func managed(entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("shop")
	u.SetName("settings")
	u.SetResourceVersion("7")
	u.SetManagedFields(entries)
	return u
}

func TestHandOverPatch(t *testing.T) {
	const (
		keyA  = `{"f:data":{"f:a":{}}}`
		keyB  = `{"f:data":{"f:b":{}}}`
		keyAB = `{"f:data":{"f:a":{},"f:b":{}}}`
	)
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	tests := []struct {
		name     string
		obj      *unstructured.Unstructured
		updaters []string
		appliers []string
		want     []metav1.ManagedFieldsEntry // nil: no patch
	}{{
		name:     "kubectl's Update entry becomes tollgate's Apply entry",
		obj:      managed(entry("kubectl-client-side-apply", update, keyA)),
		updaters: []string{"kubectl-client-side-apply"},
		want:     []metav1.ManagedFieldsEntry{entry("tollgate", apply, keyA)},
	}, {
		name:     "kubectl's fields join tollgate's",
		obj:      managed(entry("tollgate", apply, keyB), entry("kubectl-client-side-apply", update, keyA)),
		updaters: []string{"kubectl-client-side-apply"},
		want:     []metav1.ManagedFieldsEntry{entry("tollgate", apply, keyAB)},
	}, {
		name:     "argocd-controller's Apply entry becomes tollgate's",
		obj:      managed(entry("argocd-controller", apply, keyA), entry("kube-controller-manager", update, keyB)),
		updaters: []string{"kubectl-client-side-apply", "argocd-controller"},
		appliers: []string{"argocd-controller"},
		want:     []metav1.ManagedFieldsEntry{entry("tollgate", apply, keyA), entry("kube-controller-manager", update, keyB)},
	}, {
		name:     "argocd-controller's Apply entry joins tollgate's",
		obj:      managed(entry("tollgate", apply, keyB), entry("argocd-controller", apply, keyA)),
		updaters: []string{"kubectl-client-side-apply", "argocd-controller"},
		appliers: []string{"argocd-controller"},
		want:     []metav1.ManagedFieldsEntry{entry("tollgate", apply, keyAB)},
	}, {
		name:     "other managers keep their fields",
		obj:      managed(entry("argocd-controller", apply, keyA), entry("helm", update, keyB)),
		updaters: []string{"kubectl-client-side-apply"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			patch, err := handOverPatch(tt.obj, sets.New(tt.updaters...), sets.New(tt.appliers...), "tollgate")
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				if patch != nil {
					t.Fatalf("patch = %s, want none", patch)
				}
				return
			}
			var ops []struct {
				Op    string          `json:"op"`
				Path  string          `json:"path"`
				Value json.RawMessage `json:"value"`
			}
			if err := json.Unmarshal(patch, &ops); err != nil {
				t.Fatalf("patch %s: %v", patch, err)
			}
			if len(ops) != 2 || ops[0].Path != "/metadata/managedFields" || ops[1].Path != "/metadata/resourceVersion" || string(ops[1].Value) != `"7"` {
				t.Fatalf("patch = %s, want managedFields replaced with resourceVersion 7 as precondition", patch)
			}
			var got []metav1.ManagedFieldsEntry
			if err := json.Unmarshal(ops[0].Value, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("managedFields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPruneSkipReasonTracking(t *testing.T) {
	tests := []struct {
		name   string
		live   *unstructured.Unstructured
		method v1alpha1.TrackingMethod
		want   string
	}{
		{"ours by annotation", liveJob("shop:batch/Job:shop/migrate"), v1alpha1.TrackingMethodAnnotation, ""},
		{"ours by label, label tracking", labelled(liveJob(""), "shop"), v1alpha1.TrackingMethodLabel, ""},
		{"ours by label, annotation+label tracking", labelled(liveJob(""), "shop"), v1alpha1.TrackingMethodAnnotationAndLabel, ""},
		{"a label is not ownership with annotation tracking", labelled(liveJob(""), "shop"), v1alpha1.TrackingMethodAnnotation, "not tracked by this application"},
		{"another application's label", labelled(liveJob(""), "billing"), v1alpha1.TrackingMethodLabel, `tracked by application "billing" (label app.kubernetes.io/instance)`},
		{"the annotation decides over our label", labelled(liveJob("billing:batch/Job:shop/migrate"), "shop"), v1alpha1.TrackingMethodLabel, `tracked by application "billing"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pruneSkipReason(tt.live, "shop", tt.method, nil, true); got != tt.want {
				t.Errorf("pruneSkipReason = %q, want %q", got, tt.want)
			}
		})
	}
}
