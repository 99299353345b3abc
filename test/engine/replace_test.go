package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// replacedDeployment is Deployment web with the given sync options,
// selecting and labelling its pods app=<app>, running image.
func replacedDeployment(options, app, image string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    argocd.argoproj.io/sync-options: %q
spec:
  replicas: 1
  selector:
    matchLabels:
      app: %s
  template:
    metadata:
      labels:
        app: %[2]s
    spec:
      containers:
      - name: web
        image: %s
`, options, app, image)
}

// resultMessage returns the message of the last sync's result for the
// object kind/name.
func resultMessage(a *v1alpha1.Application, kind, name string) string {
	if st := a.Status.OperationState; st != nil && st.SyncResult != nil {
		for _, r := range st.SyncResult.Resources {
			if r.Kind == kind && r.Name == name {
				return r.Message
			}
		}
	}
	return ""
}

// TestReplaceAsArgoCD follows a Deployment through Argo CD's Replace=true
// and Force=true: Replace=true replaces the object in place (a PUT of the
// manifest, so what someone added by hand is gone, and the UID stays); it
// cannot change the selector, which the API server does not let change, and
// the sync fails saying that Force=true is needed; Replace=true,Force=true
// deletes the Deployment and creates it anew. The Application then stays
// Synced: a replaced object is not perpetually OutOfSync.
func TestReplaceAsArgoCD(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"manifests/web.yaml": replacedDeployment("Replace=true", "web", "registry.example.com/web:1.0.0")})
	f.application(automated(true, false), nil)
	f.waitSynced(f.head)
	var first appsv1.Deployment
	if err := f.get(&first, "web"); err != nil {
		t.Fatalf("deployment web: %v", err)
	}
	patch := []byte(`{"metadata":{"labels":{"owner":"bob"}}}`)
	if err := env.Client.Patch(t.Context(), first.DeepCopy(), client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatalf("label by hand: %v", err)
	}

	sha := f.push(map[string]string{"manifests/web.yaml": replacedDeployment("Replace=true", "web", "registry.example.com/web:2.0.0")}, nil, "web 2.0.0")
	app := f.waitSynced(sha)
	var replaced appsv1.Deployment
	if err := f.get(&replaced, "web"); err != nil {
		t.Fatalf("deployment web: %v", err)
	}
	if replaced.UID != first.UID || f.deploymentImage("web") != "registry.example.com/web:2.0.0" || replaced.Labels["owner"] != "" {
		t.Errorf("deployment uid %s image %s labels %v, want the same Deployment (%s) replaced: image 2.0.0, no owner label",
			replaced.UID, f.deploymentImage("web"), replaced.Labels, first.UID)
	}
	if msg := resultMessage(app, "Deployment", "web"); msg != "replaced" {
		t.Errorf("result message %q, want %q", msg, "replaced")
	}

	sha = f.push(map[string]string{"manifests/web.yaml": replacedDeployment("Replace=true", "web-v2", "registry.example.com/web:2.0.0")}, nil, "new selector")
	app = f.waitApp("the sync of the new selector failed", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return st != nil && st.Phase == v1alpha1.OperationFailed && st.Operation.Sync != nil && st.Operation.Sync.Revision == sha
	})
	msg := app.Status.OperationState.Message
	const hint = " (Replace=true updates the object in place, as kubectl replace does: a field the API server does not let change needs Force=true as well, which deletes and re-creates the object)"
	prefix := fmt.Sprintf("sync failed: wave Sync/0 failed: Deployment.apps %s/web: dry run: ", f.ns)
	if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, "spec.selector") || !strings.Contains(msg, "field is immutable") || !strings.HasSuffix(msg, hint) {
		t.Errorf("operation message %q, want %q…spec.selector…field is immutable…%q", msg, prefix, hint)
	}
	var kept appsv1.Deployment
	if err := f.get(&kept, "web"); err != nil || kept.UID != first.UID || kept.Spec.Selector.MatchLabels["app"] != "web" {
		t.Errorf("deployment web changed by the failed sync: %v %+v", err, kept.Spec.Selector)
	}

	sha = f.push(map[string]string{"manifests/web.yaml": replacedDeployment("Replace=true,Force=true", "web-v2", "registry.example.com/web:2.0.0")}, nil, "re-create web")
	app = f.waitSynced(sha)
	var recreated appsv1.Deployment
	if err := f.get(&recreated, "web"); err != nil {
		t.Fatalf("deployment web: %v", err)
	}
	if recreated.UID == first.UID || recreated.Spec.Selector.MatchLabels["app"] != "web-v2" {
		t.Errorf("deployment uid %s selector %v, want a new Deployment (not %s) selecting app=web-v2", recreated.UID, recreated.Spec.Selector.MatchLabels, first.UID)
	}
	if msg := resultMessage(app, "Deployment", "web"); msg != "deleted and re-created" {
		t.Errorf("result message %q, want %q", msg, "deleted and re-created")
	}
	started := app.Status.OperationState.StartedAt
	consistently(t, "Synced, no further sync", 3*resync, func() (bool, string) {
		a := f.app()
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.OperationState.StartedAt.Equal(&started), describeApp(a)
	})
}

// TestReplaceTakesOverNothingInSync: an object with Replace=true or
// Force=true whose live object is not the Application's is neither
// replaced nor deleted: a person's object fails the sync, naming it, and
// another Application's is left to that Application (SharedResourceWarning),
// as every object it tracks is.
func TestReplaceTakesOverNothingInSync(t *testing.T) {
	t.Parallel()
	const rule = "Replace=true and Force=true replace or force only an object that carries this application's tracking id"
	tests := []struct {
		name    string
		options string
		// tracking is the tracking id of the live object, "" for none.
		tracking func(ns string) string
		// failure is the operation message when the sync fails; "" when
		// it succeeds with a SharedResourceWarning.
		failure func(ns string) string
	}{
		{
			name:     "Replace=true over a person's object",
			options:  "Replace=true",
			tracking: func(string) string { return "" },
			failure: func(ns string) string {
				return fmt.Sprintf("sync failed: wave Sync/0 failed: ConfigMap %[1]s/settings: ConfigMap/%[1]s/settings exists and is not tracked by any application (no argocd.argoproj.io/tracking-id annotation); %[2]s", ns, rule)
			},
		},
		{
			name:     "Replace=true,Force=true over a person's object",
			options:  "Replace=true,Force=true",
			tracking: func(string) string { return "" },
			failure: func(ns string) string {
				return fmt.Sprintf("sync failed: wave Sync/0 failed: ConfigMap %[1]s/settings: ConfigMap/%[1]s/settings exists and is not tracked by any application (no argocd.argoproj.io/tracking-id annotation); %[2]s", ns, rule)
			},
		},
		{
			name:     "Replace=true,Force=true over another application's object",
			options:  "Replace=true,Force=true",
			tracking: func(ns string) string { return "other-app:/ConfigMap:" + ns + "/settings" },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := baseFiles()
			files["manifests/configmap.yaml"] = annotatedConfigMap("settings", "argocd.argoproj.io/sync-options", tc.options)
			f := newFixture(t, files)
			live := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: f.ns},
				Data:       map[string]string{"key": "theirs"},
			}
			if id := tc.tracking(f.ns); id != "" {
				live.Annotations = map[string]string{v1alpha1.AnnotationKeyTrackingID: id}
			}
			f.create(live)
			wantData, wantAnnotations := live.Data, live.Annotations
			f.application(automated(true, false), nil)

			if tc.failure == nil {
				f.waitApp("SharedResourceWarning and the rest synced", func(a *v1alpha1.Application) bool {
					msg, ok := condition(a, v1alpha1.ApplicationConditionSharedResourceWarning)
					st := a.Status.OperationState
					return ok && strings.Contains(msg, "settings") && strings.Contains(msg, "other-app") &&
						st != nil && st.Phase == v1alpha1.OperationSucceeded
				})
			} else {
				app := f.waitApp("sync failed on the replaced object", func(a *v1alpha1.Application) bool {
					st := a.Status.OperationState
					return st != nil && st.Phase == v1alpha1.OperationFailed
				})
				if diff := cmp.Diff(tc.failure(f.ns), app.Status.OperationState.Message); diff != "" {
					t.Errorf("operation message (-want +got):\n%s", diff)
				}
			}
			consistently(t, "their object untouched", 2*resync, func() (bool, string) {
				var cm corev1.ConfigMap
				if err := f.get(&cm, "settings"); err != nil {
					return false, err.Error()
				}
				if cm.UID != live.UID || cm.ResourceVersion != live.ResourceVersion ||
					!cmp.Equal(wantData, cm.Data) || !cmp.Equal(wantAnnotations, cm.Annotations) {
					return false, fmt.Sprintf("uid %s resourceVersion %s data %v annotations %v; want %s %s %v %v",
						cm.UID, cm.ResourceVersion, cm.Data, cm.Annotations, live.UID, live.ResourceVersion, wantData, wantAnnotations)
				}
				return true, ""
			})
		})
	}
}
