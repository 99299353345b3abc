package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/engine/apply/plan"
)

// object is an object of kind apiVersion/kind named name.
func object(apiVersion, kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	return u
}

func TestModeOf(t *testing.T) {
	deployment := object("apps/v1", "Deployment", "web")
	crd := object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com")
	namespace := object("v1", "Namespace", "shop")
	tests := []struct {
		name string
		opts plan.SyncOptions
		obj  *unstructured.Unstructured
		live bool
		want writeMode
	}{
		{name: "no option: apply", obj: deployment, live: true, want: writeApply},
		{name: "Replace=true: PUT", opts: plan.SyncOptions{Replace: true}, obj: deployment, live: true, want: writeReplace},
		{name: "Replace=true,Force=true: delete and create", opts: plan.SyncOptions{Replace: true, Force: true}, obj: deployment, live: true, want: writeRecreate},
		{name: "Force=true: apply, re-create when rejected", opts: plan.SyncOptions{Force: true}, obj: deployment, live: true, want: writeApplyOrRecreate},
		{name: "Force=true,ServerSideApply=true: apply only", opts: plan.SyncOptions{Force: true, ServerSideApply: true}, obj: deployment, live: true, want: writeApply},
		{name: "Replace=true,Force=true,ServerSideApply=true: delete and create", opts: plan.SyncOptions{Replace: true, Force: true, ServerSideApply: true}, obj: deployment, live: true, want: writeRecreate},
		{name: "Replace=true, nothing live: created by apply", opts: plan.SyncOptions{Replace: true}, obj: deployment, want: writeApply},
		{name: "Replace=true,Force=true, nothing live: created by apply", opts: plan.SyncOptions{Replace: true, Force: true}, obj: deployment, want: writeApply},
		{name: "CRD with Replace=true,Force=true: PUT", opts: plan.SyncOptions{Replace: true, Force: true}, obj: crd, live: true, want: writeReplace},
		{name: "Namespace with Replace=true,Force=true: PUT", opts: plan.SyncOptions{Replace: true, Force: true}, obj: namespace, live: true, want: writeReplace},
		{name: "CRD with Force=true: apply only", opts: plan.SyncOptions{Force: true}, obj: crd, live: true, want: writeApply},
		{name: "Namespace with Force=true: apply only", opts: plan.SyncOptions{Force: true}, obj: namespace, live: true, want: writeApply},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var live *unstructured.Unstructured
			if tc.live {
				live = tc.obj.DeepCopy()
			}
			if got := modeOf(tc.opts, tc.obj, live); got != tc.want {
				t.Errorf("modeOf = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestRejectHint(t *testing.T) {
	immutable := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", field.ErrorList{
		field.Invalid(field.NewPath("spec", "selector"), "app=web-2", "field is immutable"),
	})
	conflict := apierrors.NewApplyConflict(nil, `Apply failed with 1 conflict: conflict with "kubectl-edit": .data.key`)
	const replaceHint = " (Replace=true updates the object in place, as kubectl replace does: a field the API server does not let change needs Force=true as well, which deletes and re-creates the object)"
	const conflictHint = " (the live object is not tracked by this application, so fields another manager owns are not taken over)"
	tests := []struct {
		name  string
		err   error
		opts  plan.SyncOptions
		obj   *unstructured.Unstructured
		force bool
		want  string
	}{
		{name: "Replace=true rejected as invalid", err: immutable, opts: plan.SyncOptions{Replace: true}, obj: object("apps/v1", "Deployment", "web"), force: true, want: replaceHint},
		{name: "CRD with Replace=true: Force=true would not help", err: immutable, opts: plan.SyncOptions{Replace: true}, obj: object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com"), force: true},
		{name: "apply rejected as invalid", err: immutable, obj: object("apps/v1", "Deployment", "web"), force: true},
		{name: "conflict over an object not ours", err: conflict, obj: object("v1", "ConfigMap", "settings"), want: conflictHint},
		{name: "conflict over our object", err: conflict, obj: object("v1", "ConfigMap", "settings"), force: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it := &item{task: plan.Task{SyncOptions: tc.opts}, obj: tc.obj, live: tc.obj.DeepCopy(), force: tc.force}
			if diff := cmp.Diff(tc.want, rejectHint(tc.err, it)); diff != "" {
				t.Errorf("rejectHint (-want +got):\n%s", diff)
			}
		})
	}
}
