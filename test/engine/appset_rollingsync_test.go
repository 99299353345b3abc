package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/applicationset"
)

// rollingSyncSet generates dev (a LoadBalancer Service: Progressing until
// it gets an address) and prod-a and prod-b (ConfigMaps), automated with
// prune in the template, synced in two steps by their env label, prod one
// Application at a time.
const rollingSyncSet = `
spec:
  goTemplate: true
  generators:
  - list:
      elements:
      - {name: dev, env: dev}
      - {name: prod-a, env: prod}
      - {name: prod-b, env: prod}
  strategy:
    type: RollingSync
    rollingSync:
      steps:
      - matchExpressions: [{key: env, operator: In, values: [dev]}]
      - matchExpressions: [{key: env, operator: In, values: [prod]}]
        maxUpdate: 1
  template:
    metadata:
      name: '%[1]s-{{.name}}'
      labels: {env: '{{.env}}'}
    spec:
      project: %[1]s
      source: {repoURL: %[3]s, targetRevision: %[4]s, path: 'apps/{{.name}}'}
      destination: {server: https://kubernetes.default.svc, namespace: %[2]s}
      syncPolicy:
        automated: {prune: true}
`

// TestApplicationSetRollingSync: with --enable-progressive-syncs (on in
// this package's engine) an ApplicationSet's RollingSync turns automated
// sync off on its Applications and syncs them itself, step by step, as
// Argo CD's: the dev Application first (its sync initiated by
// applicationset-controller, automated, pruning as its template's
// automated policy said) while prod's wait (Waiting); once dev is Healthy,
// prod's, one at a time (maxUpdate 1); the ApplicationSet's
// status.applicationStatus and RolloutProgressing condition say where the
// rollout is, until it has completed.
func TestApplicationSetRollingSync(t *testing.T) {
	svc := strings.Replace(loadBalancerFront, "name: front", "name: dev-front", 1)
	f := newFixture(t, map[string]string{
		"apps/dev/svc.yaml":   svc,
		"apps/prod-a/cm.yaml": configMap("prod-a", "1"),
		"apps/prod-b/cm.yaml": configMap("prod-b", "1"),
	})
	f.project()
	set := f.appSet(argoNS, rollingSyncSet)
	dev, prodA, prodB := f.name+"-dev", f.name+"-prod-a", f.name+"-prod-b"
	apps := waitGenerated(t, argoNS, set, dev, prodA, prodB)
	for name, a := range apps {
		if auto := a.Spec.SyncPolicy.Automated; auto == nil || auto.Enabled == nil || *auto.Enabled || !auto.Prune {
			t.Errorf("application %s: automated %+v, want prune with enabled: false", name, auto)
		}
	}

	// dev syncs first; its Service holds it Progressing. prod waits.
	rollout := func(want map[string]v1alpha1.ProgressiveSyncStatusCode) func() (bool, string) {
		return func() (bool, string) {
			got := appStatuses(t, set)
			for name, st := range want {
				if got[name].Status != st {
					return false, describeSet(t, set)
				}
			}
			return true, ""
		}
	}
	eventually(t, "dev Progressing, prod Waiting", rollout(map[string]v1alpha1.ProgressiveSyncStatusCode{
		dev: v1alpha1.ProgressiveSyncProgressing, prodA: v1alpha1.ProgressiveSyncWaiting, prodB: v1alpha1.ProgressiveSyncWaiting,
	}))
	st := appStatuses(t, set)
	if st[dev].Step != "1" || st[prodA].Step != "2" || st[prodB].Step != "2" {
		t.Errorf("steps: %+v", st)
	}
	waitCondition(t, set, v1alpha1.ApplicationSetConditionRolloutProgressing, v1alpha1.ApplicationSetConditionStatusTrue,
		v1alpha1.ApplicationSetReasonApplicationSetModified, "ApplicationSet is performing rollout of step 1")
	devApp := getApp(t, dev)
	op := devApp.Status.OperationState
	if op == nil || op.Operation.InitiatedBy != (v1alpha1.OperationInitiator{Username: applicationset.RollingSyncUser, Automated: true}) ||
		op.Operation.Sync == nil || !op.Operation.Sync.Prune || len(op.Operation.Info) != 1 || op.Operation.Info[0].Name != "Reason" {
		t.Errorf("dev's sync: %+v", op)
	}
	consistently(t, "prod waits while dev is not Healthy", 3*time.Second, func() (bool, string) {
		for _, name := range []string{prodA, prodB} {
			a := getApp(t, name)
			if a.Operation != nil || a.Status.OperationState != nil {
				return false, name + " synced: " + describeSet(t, set)
			}
		}
		return appStatuses(t, set)[prodA].Status == v1alpha1.ProgressiveSyncWaiting, describeSet(t, set)
	})

	// The load balancer comes: dev is Healthy, and prod's syncs follow,
	// one Application at a time.
	var lb corev1.Service
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: f.ns, Name: "dev-front"}, &lb); err != nil {
		t.Fatal(err)
	}
	lb.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.10"}}
	if err := env.Client.Status().Update(t.Context(), &lb); err != nil {
		t.Fatal(err)
	}
	all := map[string]v1alpha1.ProgressiveSyncStatusCode{dev: v1alpha1.ProgressiveSyncHealthy, prodA: v1alpha1.ProgressiveSyncHealthy, prodB: v1alpha1.ProgressiveSyncHealthy}
	eventually(t, "every Application Healthy, prod one at a time", func() (bool, string) {
		got := appStatuses(t, set)
		if s := []v1alpha1.ProgressiveSyncStatusCode{got[prodA].Status, got[prodB].Status}; !slices.Contains(s, v1alpha1.ProgressiveSyncWaiting) &&
			!slices.Contains(s, v1alpha1.ProgressiveSyncHealthy) {
			t.Fatalf("both prod Applications sync at once, past maxUpdate 1: %s", describeSet(t, set))
		}
		return rollout(all)()
	})
	waitCondition(t, set, v1alpha1.ApplicationSetConditionRolloutProgressing, v1alpha1.ApplicationSetConditionStatusFalse,
		v1alpha1.ApplicationSetReasonApplicationSetRolloutComplete, "ApplicationSet Rollout has completed")
	devOp, a, b := getApp(t, dev).Status.OperationState, getApp(t, prodA).Status.OperationState, getApp(t, prodB).Status.OperationState
	if a == nil || b == nil || devOp == nil || devOp.FinishedAt == nil || a.FinishedAt == nil ||
		a.StartedAt.Before(devOp.FinishedAt) || b.StartedAt.Before(a.FinishedAt) {
		t.Errorf("syncs out of order: dev %s, prod-a %s, prod-b %s", opTimes(devOp), opTimes(a), opTimes(b))
	}
}

// appStatuses reads set's status.applicationStatus by Application.
func appStatuses(t *testing.T, set *v1alpha1.ApplicationSet) map[string]v1alpha1.ApplicationSetApplicationStatus {
	t.Helper()
	var live v1alpha1.ApplicationSet
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(set), &live); err != nil {
		t.Fatalf("get applicationset: %v", err)
	}
	out := map[string]v1alpha1.ApplicationSetApplicationStatus{}
	for _, s := range live.Status.ApplicationStatus {
		out[s.Application] = s
	}
	return out
}

// getApp reads the Application name of the control-plane namespace.
func getApp(t *testing.T, name string) *v1alpha1.Application {
	t.Helper()
	var a v1alpha1.Application
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: argoNS, Name: name}, &a); err != nil {
		t.Fatalf("get application %s: %v", name, err)
	}
	return &a
}

// opTimes describes when an operation started and finished.
func opTimes(op *v1alpha1.OperationState) string {
	if op == nil {
		return "none"
	}
	return fmt.Sprintf("%s..%v", op.StartedAt, op.FinishedAt)
}

// reverseDeletionSet is rollingSyncSet of ConfigMaps (healthy at once),
// deleted in reverse order of its steps, its Applications cascading.
const reverseDeletionSet = `
spec:
  goTemplate: true
  generators:
  - list:
      elements:
      - {name: dev, env: dev}
      - {name: prod, env: prod}
  strategy:
    type: RollingSync
    deletionOrder: Reverse
    rollingSync:
      steps:
      - matchExpressions: [{key: env, operator: In, values: [dev]}]
      - matchExpressions: [{key: env, operator: In, values: [prod]}]
  template:
    metadata:
      name: '%[1]s-{{.name}}'
      labels: {env: '{{.env}}'}
      finalizers: [resources-finalizer.argocd.argoproj.io]
    spec:
      project: %[1]s
      source: {repoURL: %[3]s, targetRevision: %[4]s, path: 'apps/{{.name}}'}
      destination: {server: https://kubernetes.default.svc, namespace: %[2]s}
      syncPolicy:
        automated: {prune: true}
`

// TestApplicationSetReverseDeletion: an ApplicationSet with deletionOrder
// Reverse, deleted, deletes its Applications from the last step to the
// first, as Argo CD does: prod's Application (and, cascading, its
// ConfigMap) is gone before dev's deletion starts; then the ApplicationSet
// goes.
func TestApplicationSetReverseDeletion(t *testing.T) {
	f := newFixture(t, map[string]string{
		"apps/dev/cm.yaml":  configMap("dev", "1"),
		"apps/prod/cm.yaml": configMap("prod", "1"),
	})
	f.project()
	set := f.appSet(argoNS, reverseDeletionSet)
	dev, prod := f.name+"-dev", f.name+"-prod"
	waitGenerated(t, argoNS, set, dev, prod)
	waitCondition(t, set, v1alpha1.ApplicationSetConditionRolloutProgressing, v1alpha1.ApplicationSetConditionStatusFalse,
		v1alpha1.ApplicationSetReasonApplicationSetRolloutComplete, "ApplicationSet Rollout has completed")

	if err := env.Client.Delete(t.Context(), set); err != nil {
		t.Fatal(err)
	}
	// Watched closely: dev must not start to go while prod is there.
	deadline := time.Now().Add(time.Minute)
	for {
		var devApp, prodApp v1alpha1.Application
		devErr := env.Client.Get(t.Context(), client.ObjectKey{Namespace: argoNS, Name: dev}, &devApp)
		prodErr := env.Client.Get(t.Context(), client.ObjectKey{Namespace: argoNS, Name: prod}, &prodApp)
		prodGone := apierrors.IsNotFound(prodErr)
		if !prodGone && (apierrors.IsNotFound(devErr) || devApp.DeletionTimestamp != nil) {
			t.Fatalf("dev's Application is being deleted while prod's is still there (deleting: %v)", prodApp.DeletionTimestamp != nil)
		}
		if prodGone && apierrors.IsNotFound(devErr) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not deleted within a minute: dev %v, prod %v; %s", devErr, prodErr, describeSet(t, set))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, cm := range []string{"dev", "prod"} {
		if ok, why := f.gone(&corev1.ConfigMap{}, cm); !ok {
			t.Errorf("ConfigMap %s: %s", cm, why)
		}
	}
	eventually(t, "the ApplicationSet goes", func() (bool, string) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(set), &v1alpha1.ApplicationSet{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}
