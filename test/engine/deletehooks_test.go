package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// preDeletePod is a PreDelete hook Pod; with no kubelet here, the test
// ends it by writing its status phase.
const preDeletePod = `apiVersion: v1
kind: Pod
metadata:
  name: pre
  annotations:
    argocd.argoproj.io/hook: PreDelete
spec:
  restartPolicy: Never
  containers: [{name: c, image: registry.example.com/backup:1.0.0}]
`

// endPod writes the phase of the running PreDelete hook Pod and returns
// its UID.
func (f *fixture) endPod(phase corev1.PodPhase) types.UID {
	f.t.Helper()
	var pod corev1.Pod
	eventually(f.t, "the PreDelete hook runs", func() (bool, string) {
		if err := f.get(&pod, "pre"); err != nil {
			return false, err.Error()
		}
		return pod.DeletionTimestamp == nil && (pod.Status.Phase == "" || pod.Status.Phase == corev1.PodPending), string(pod.Status.Phase)
	})
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"status":{"phase":%q}}`, phase)))
	if err := env.Client.Status().Patch(f.t.Context(), &pod, patch); err != nil {
		f.t.Fatal(err)
	}
	return pod.UID
}

// TestDeleteHooks: PreDelete and PostDelete hooks run when the Application
// is deleted, in Argo CD's order: the PreDelete hook first (a failure
// stops the deletion with a DeletionError condition and the hook runs
// again), then the resources are deleted, then the PostDelete hook runs,
// and the hooks without a delete policy are cleaned up last. Neither runs
// in a sync; the Application carries Argo CD's finalizers for them.
func TestDeleteHooks(t *testing.T) {
	t.Parallel()
	files := baseFiles()
	files["manifests/pre.yaml"] = preDeletePod
	files["manifests/post.yaml"] = annotatedConfigMap("post", "argocd.argoproj.io/hook", "PostDelete")
	files["manifests/post-kept.yaml"] = `apiVersion: v1
kind: ConfigMap
metadata:
  name: post-kept
  annotations:
    argocd.argoproj.io/hook: PostDelete
    argocd.argoproj.io/hook-delete-policy: HookFailed
data: {key: v}
`
	f := newFixture(t, files)
	f.application(automated(true, false), func(a *v1alpha1.Application) {
		a.Finalizers = []string{v1alpha1.ResourcesFinalizerName}
	})
	f.waitSynced(f.head)
	app := f.waitApp("Argo CD's delete hook finalizers", func(a *v1alpha1.Application) bool {
		for _, fin := range []string{v1alpha1.PreDeleteFinalizerName, v1alpha1.PreDeleteCleanupFinalizerName, v1alpha1.PostDeleteFinalizerName, v1alpha1.PostDeleteCleanupFinalizerName} {
			if !slices.Contains(a.Finalizers, fin) {
				return false
			}
		}
		return true
	})
	for _, name := range []string{"post", "post-kept"} {
		if gone, _ := f.gone(&corev1.ConfigMap{}, name); !gone {
			t.Errorf("PostDelete hook %s ran in a sync", name)
		}
	}
	if gone, _ := f.gone(&corev1.Pod{}, "pre"); !gone {
		t.Errorf("PreDelete hook ran in a sync")
	}

	if err := env.Client.Delete(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	first := f.endPod(corev1.PodFailed)
	f.waitApp("the failed PreDelete hook stops the deletion", func(a *v1alpha1.Application) bool {
		msg, ok := condition(a, v1alpha1.ApplicationConditionDeletionError)
		return ok && strings.HasPrefix(msg, "error executing pre-delete hooks: PreDelete hook(s) failed: "+f.ns+"/pre")
	})
	if gone, _ := f.gone(&corev1.ConfigMap{}, "settings"); gone {
		t.Fatal("resources deleted although the PreDelete hook failed")
	}
	if gone, _ := f.gone(&corev1.ConfigMap{}, "post"); !gone {
		t.Fatal("PostDelete hook ran before the resources were deleted")
	}
	if again := f.endPod(corev1.PodSucceeded); again == first {
		t.Errorf("the PreDelete hook was not run again (same pod %s)", again)
	}
	eventually(t, "resources deleted, PostDelete run, hooks cleaned up, application gone", func() (bool, string) {
		var a v1alpha1.Application
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: argoNS, Name: f.name}, &a); err == nil {
			return false, "application still there: " + strings.Join(a.Finalizers, ", ")
		}
		for _, name := range []string{"settings", "post"} {
			if gone, why := f.gone(&corev1.ConfigMap{}, name); !gone {
				return false, why
			}
		}
		return f.gone(&corev1.Pod{}, "pre")
	})
	var kept corev1.ConfigMap
	if err := f.get(&kept, "post-kept"); err != nil {
		t.Errorf("the PostDelete hook with a HookFailed policy that succeeded is kept, as Argo CD: %v", err)
	}
}
