package devstack

import (
	"context"
	"fmt"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// sealedSecrets is the SealedSecret resource config/dev installs.
var sealedSecrets = schema.GroupVersionResource{Group: "bitnami.com", Version: "v1alpha1", Resource: "sealedsecrets"}

// syncedStatus is what the stand-in writes: the Synced condition the
// sealed-secrets controller sets once it has decrypted an object, which
// Argo CD's health check (and tollgate's) waits for. Nothing is decrypted.
const syncedStatus = `{"status":{"conditions":[{"type":"Synced","status":"True","reason":"Simulated",` +
	`"message":"tollgate dev: no sealed-secrets controller runs; nothing was decrypted"}]}}`

// runSealedSecrets stands in for the sealed-secrets controller until ctx
// ends: every SealedSecret without a Synced condition gets one, so that the
// Applications syncing one become Healthy as they would on a cluster with
// the controller. Errors are printed; the stand-in keeps going.
func runSealedSecrets(ctx context.Context, cfg *rest.Config) error {
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("sealed-secrets stand-in: %w", err)
	}
	mark := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || synced(u) {
			return
		}
		_, err := dc.Resource(sealedSecrets).Namespace(u.GetNamespace()).Patch(ctx, u.GetName(), types.MergePatchType,
			[]byte(syncedStatus), metav1.PatchOptions{}, "status")
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "tollgate dev: sealed-secrets stand-in: mark %s/%s: %v\n", u.GetNamespace(), u.GetName(), err)
		}
	}
	f := dynamicinformer.NewDynamicSharedInformerFactory(dc, 0)
	inf := f.ForResource(sealedSecrets).Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    mark,
		UpdateFunc: func(_, obj any) { mark(obj) },
	}); err != nil {
		return fmt.Errorf("sealed-secrets stand-in: %w", err)
	}
	go inf.Run(ctx.Done())
	return nil
}

// synced reports whether u has a Synced condition already.
func synced(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Synced" {
			return true
		}
	}
	return false
}
