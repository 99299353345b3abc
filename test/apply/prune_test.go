package apply_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
)

var configMapKind = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// configMaps renders one ConfigMap per name; "name:annotation=value" adds an
// annotation.
func configMaps(t *testing.T, ns string, specs ...string) []*unstructured.Unstructured {
	t.Helper()
	var docs []string
	for _, s := range specs {
		name, ann, _ := strings.Cut(s, ":")
		doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
		if ann != "" {
			k, v, _ := strings.Cut(ann, "=")
			doc += fmt.Sprintf("  annotations:\n    %s: %q\n", k, v)
		}
		docs = append(docs, doc+"data: {k: v}\n")
	}
	return decode(t, ns, strings.Join(docs, "\n---\n"))
}

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetNamespace()+"/"+o.GetName())
	}
	slices.Sort(out)
	return out
}

func TestPrune(t *testing.T) {
	ns := env.Namespace(t)
	// ListOwned searches the whole cluster: app names unique to this test.
	app, other := "shop-"+ns, "billing-"+ns
	shop := configMaps(t, ns, "keep", "old-1", "old-2:argocd.argoproj.io/sync-wave=3",
		"pinned:argocd.argoproj.io/sync-options=Prune=false", "retained:argocd.argoproj.io/sync-options=Delete=false",
		"last:argocd.argoproj.io/sync-options=PruneLast=true")
	if _, err := applier.Run(t.Context(), build(t, app, shop), apply.WaveOptions{App: app}); err != nil {
		t.Fatalf("apply shop: %v", err)
	}
	billing := configMaps(t, ns, "billing")
	if _, err := applier.Run(t.Context(), build(t, other, billing), apply.WaveOptions{App: other}); err != nil {
		t.Fatalf("apply billing: %v", err)
	}
	untracked := configMaps(t, ns, "untracked")[0]
	if err := env.Client.Create(t.Context(), untracked); err != nil {
		t.Fatal(err)
	}

	owned, err := applier.ListOwned(t.Context(), app, []schema.GroupVersionKind{configMapKind})
	if err != nil {
		t.Fatalf("ListOwned: %v", err)
	}
	want := []string{ns + "/keep", ns + "/last", ns + "/old-1", ns + "/old-2", ns + "/pinned", ns + "/retained"}
	if diff := cmp.Diff(want, names(owned)); diff != "" {
		t.Fatalf("ListOwned (-want +got):\n%s", diff)
	}
	t.Run("discovery finds the same objects", func(t *testing.T) {
		all, err := applier.ListOwned(t.Context(), app, nil)
		if err != nil {
			t.Fatalf("ListOwned: %v", err)
		}
		if diff := cmp.Diff(want, names(all)); diff != "" {
			t.Errorf("ListOwned without kinds (-want +got):\n%s", diff)
		}
	})

	desired := configMaps(t, ns, "keep")
	t.Run("dry run deletes nothing", func(t *testing.T) {
		res, err := applier.Prune(t.Context(), owned, desired, apply.PruneOptions{App: app, DryRun: true})
		if err != nil {
			t.Fatalf("Prune: %v", err)
		}
		if len(res) != 5 || get(t, "v1", "ConfigMap", ns, "old-1") == nil {
			t.Errorf("dry run results %v", summary(res))
		}
	})

	// A caller bug hands Prune another application's object, and old-1
	// changes hands after it was listed: neither may be deleted.
	owned = append(owned, get(t, "v1", "ConfigMap", ns, "billing"))
	moved := get(t, "v1", "ConfigMap", ns, "old-1")
	patched := moved.DeepCopy()
	v1alpha1.SetTracking(patched, other, "")
	if err := env.Client.Patch(t.Context(), patched, client.MergeFrom(moved)); err != nil {
		t.Fatal(err)
	}

	res, err := applier.Prune(t.Context(), owned, desired, apply.PruneOptions{App: app, PropagationPolicy: plan.PropagationBackground})
	if err != nil {
		t.Fatalf("Prune: %v", err)
	}
	type row struct{ Status, Name, Message string }
	var got []row
	for _, r := range res {
		got = append(got, row{string(r.Status), r.Ref.Name, r.Message})
	}
	wantRows := []row{
		{"PruneSkipped", "pinned", "Prune=false"},
		{"PruneSkipped", "retained", "Delete=false"},
		{"PruneSkipped", "billing", `tracked by application "` + other + `"`},
		{"Pruned", "old-2", "pruned"}, // wave 3 before wave 0
		{"PruneSkipped", "old-1", `tracked by application "` + other + `"`},
		{"Pruned", "last", "pruned"}, // PruneLast
	}
	if diff := cmp.Diff(wantRows, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	for name, wantExists := range map[string]bool{
		"keep": true, "old-1": true, "old-2": false, "pinned": true, "retained": true, "last": false,
		"billing": true, "untracked": true,
	} {
		if exists := get(t, "v1", "ConfigMap", ns, name) != nil; exists != wantExists {
			t.Errorf("ConfigMap %s exists = %v, want %v", name, exists, wantExists)
		}
	}
}

func TestPruneRequiresApp(t *testing.T) {
	if _, err := applier.Prune(t.Context(), nil, nil, apply.PruneOptions{}); err == nil {
		t.Error("Prune without App: want error")
	}
}

// TestListOwnedAfterKindRemoved: a search over every listable kind still
// succeeds after a CustomResourceDefinition was deleted while discovery
// (cached for DiscoveryTTL) still names its kind; a deletion that needs
// the search (the resources finalizer) is not stuck until the cache
// expires.
func TestListOwnedAfterKindRemoved(t *testing.T) {
	ns := env.Namespace(t)
	group := strings.ReplaceAll(ns, "-", "") + ".example.com"
	def := decode(t, "", strings.ReplaceAll(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.GROUP
spec:
  group: GROUP
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`, "GROUP", group))[0]
	if err := env.Client.Create(t.Context(), def); err != nil {
		t.Fatal(err)
	}
	app := "gadgets-" + ns
	gadget := decode(t, ns, "apiVersion: "+group+"/v1\nkind: Gadget\nmetadata: {name: g}\n")
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := applier.Run(ctx, build(t, app, gadget), apply.WaveOptions{App: app})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("apply a Gadget: %v", err)
	}
	// Fresh discovery names Gadget, and the search finds the object.
	lister, err := newApplier(time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if owned, err := lister.ListOwned(t.Context(), app, nil); err != nil || len(owned) != 1 {
		t.Fatalf("ListOwned with Gadget served: %d objects, %v", len(owned), err)
	}
	if err := env.Client.Delete(t.Context(), def); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(def), def)
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("the CustomResourceDefinition is still there: %v", err)
	}
	owned, err := lister.ListOwned(t.Context(), app, nil)
	if err != nil {
		t.Fatalf("ListOwned after the kind was removed: %v", err)
	}
	if len(owned) != 0 {
		t.Errorf("ListOwned after the kind was removed: %s, want nothing", names(owned))
	}
}
