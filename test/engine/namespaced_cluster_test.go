package engine_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
)

// TestNamespacedCluster: a cluster Secret with the key namespaces (Argo
// CD's namespaced mode) lets the engine manage only objects in those
// namespaces, and no cluster-scoped ones without clusterResources "true",
// as Argo CD's cluster cache: an object elsewhere is a ComparisonError
// with Argo CD's message and nothing of the revision is applied; a live
// object elsewhere that carries the Application's tracking metadata is
// neither listed nor pruned, until the Secret lists its namespace. Not
// parallel: the Secret registers the test control plane's own URL, which
// other tests' Secrets share.
func TestNamespacedCluster(t *testing.T) {
	f := newFixture(t, map[string]string{"manifests/cm.yaml": configMap("inside", "1")})
	outside := env.Namespace(t)
	go fakeControllers(t.Context(), outside) // the garbage collector's part in a prune
	cluster := "namespaced-" + f.name
	f.clusterSecret(map[string]string{"name": cluster, "server": env.Config.Host, "namespaces": " , " + f.ns + ",kube-public"})
	f.editProject = func(p *v1alpha1.AppProject) {
		p.Spec.Destinations = []v1alpha1.ApplicationDestination{{Name: cluster, Namespace: "*"}}
		p.Spec.ClusterResourceWhitelist = []v1alpha1.ClusterResourceRestrictionItem{{Group: "*", Kind: "*"}}
	}
	f.application(automated(true, false), func(a *v1alpha1.Application) {
		a.Spec.Destination = v1alpha1.ApplicationDestination{Name: cluster, Namespace: f.ns}
	})
	f.waitSynced(f.head)

	// A tracked object outside the managed namespaces: not the engine's
	// to see, so not listed, and not pruned.
	stray := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "stray", "namespace": outside},
	}}
	v1alpha1.SetTracking(stray, f.name, application.DefaultOptions().TrackingMethod)
	f.create(stray)
	f.refresh()
	consistently(t, "the stray ConfigMap is neither listed nor pruned", 3*time.Second, func() (bool, string) {
		for _, r := range f.app().Status.Resources {
			if r.Namespace == outside {
				return false, fmt.Sprintf("listed: %+v", r)
			}
		}
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(stray), &corev1.ConfigMap{}); err != nil {
			return false, err.Error()
		}
		return true, ""
	})

	// A ConfigMap of the namespace the Secret does not list, at first.
	elsewhere := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: elsewhere\n  namespace: %s\n", outside)
	for _, tc := range []struct {
		file, manifest, want string
	}{{
		file:     "manifests/outside.yaml",
		manifest: elsewhere,
		want:     fmt.Sprintf("Failed to load live state: namespace %q for ConfigMap %q is not managed", outside, "elsewhere"),
	}, {
		file:     "manifests/role.yaml",
		manifest: "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: " + f.name + "-reader\n",
		want:     fmt.Sprintf("Failed to load live state: cluster level ClusterRole %q can not be managed when in namespaced mode", f.name+"-reader"),
	}} {
		before := f.app().Status.Sync.Revision
		rev := f.push(map[string]string{tc.file: tc.manifest, "manifests/cm.yaml": configMap("inside", tc.file)}, nil, "add "+tc.file)
		f.waitApp("ComparisonError for "+tc.file, func(a *v1alpha1.Application) bool {
			msg, _ := condition(a, v1alpha1.ApplicationConditionComparisonError)
			return msg == tc.want
		})
		consistently(t, "nothing of "+rev+" is applied", 3*time.Second, func() (bool, string) {
			if got := f.app().Status.Sync.Revision; got != before {
				return false, "synced " + got
			}
			var cm corev1.ConfigMap
			if err := f.get(&cm, "inside"); err != nil {
				return false, err.Error()
			}
			return cm.Data["key"] != tc.file, "inside was updated"
		})
		f.waitSynced(f.push(nil, []string{tc.file}, "remove "+tc.file))
	}
	err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: outside, Name: "elsewhere"}, &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap elsewhere in %s: %v, want it never created", outside, err)
	}

	// The Secret lists the other namespace too: the Application deploys
	// there, and the stray object, now the engine's to see, is pruned.
	edit(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: cluster}}, func(s *corev1.Secret) {
		s.Data["namespaces"] = []byte(f.ns + "," + outside)
	})
	f.waitSynced(f.push(map[string]string{"manifests/outside.yaml": elsewhere}, nil, "add outside.yaml again"))
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: outside, Name: "elsewhere"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("ConfigMap elsewhere in %s once the Secret lists it: %v", outside, err)
	}
	eventually(t, "the stray ConfigMap is pruned", func() (bool, string) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(stray), &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}
