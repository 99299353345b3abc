package application

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/metrics"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// owning is a Sharder that owns the keys of owned; it answers nothing
// else.
type owning struct {
	Sharder
	owned map[string]bool
}

func (o owning) Owns(key string) bool { return o.owned[key] }

// TestEachApplication lists the Applications this replica reconciles for
// argocd_app_info: of the control-plane namespace, owned, not skipped,
// each with its destination's server, by name through the cluster
// Secrets; none before the replica reconciles.
func TestEachApplication(t *testing.T) {
	app := func(ns, name string, dest v1alpha1.ApplicationDestination, annotations map[string]string) client.Object {
		return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations}, Spec: v1alpha1.ApplicationSpec{Destination: dest}}
	}
	prod := clusterSecret("prod", "https://prod.example.com:6443/", `{"bearerToken":"t"}`, "1")
	prod.Namespace = "argocd"
	objs := []client.Object{
		app("argocd", "by-server", v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc/"}, nil),
		app("argocd", "by-name", v1alpha1.ApplicationDestination{Name: "prod"}, nil),
		app("argocd", "in-cluster", v1alpha1.ApplicationDestination{Name: InClusterName}, nil),
		app("argocd", "unknown-name", v1alpha1.ApplicationDestination{Name: "staging"}, nil),
		app("argocd", "skipped", v1alpha1.ApplicationDestination{Name: "prod"}, map[string]string{v1alpha1.AnnotationKeyAppSkipReconcile: "true"}),
		app("argocd", "other-replica", v1alpha1.ApplicationDestination{Name: "prod"}, nil),
		app("appsets", "other-namespace", v1alpha1.ApplicationDestination{Name: "prod"}, nil),
		&prod,
	}
	c := fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).WithObjects(objs...).Build()
	owned := map[string]bool{}
	for _, n := range []string{"by-server", "by-name", "in-cluster", "unknown-name", "skipped", "other-namespace"} {
		owned["argocd/"+n] = true
	}
	r := &Reconciler{client: c, opts: Options{Namespace: "argocd"}, shard: owning{owned: owned}}
	got := map[string]string{}
	each := func() {
		t.Helper()
		err := replicaApps{r}.EachApplication(t.Context(), func(app *v1alpha1.Application, server string) {
			got[app.Namespace+"/"+app.Name] = server
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	each()
	if len(got) != 0 {
		t.Errorf("a replica that does not reconcile (yet) lists %v, want none", got)
	}
	r.reconciling.Store(true)
	each()
	want := map[string]string{
		"argocd/by-server":    InClusterServer,
		"argocd/by-name":      "https://prod.example.com:6443",
		"argocd/in-cluster":   InClusterServer,
		"argocd/unknown-name": "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Applications and destination servers (-want +got):\n%s", diff)
	}
}

func TestEachCluster(t *testing.T) {
	cs := newClusters(&rest.Config{Host: "https://local:6443"}, func(_ context.Context, server string, cfg *rest.Config, _ apply.Scope) (*cluster, error) {
		return &cluster{config: cfg, stats: &cacheStats{server: server}}, nil
	})
	defer cs.stop()
	secrets := []corev1.Secret{clusterSecret("prod", "https://prod.example.com:6443", `{"bearerToken":"t"}`, "1")}
	local, err := cs.resolve(t.Context(), v1alpha1.ApplicationDestination{Server: InClusterServer}, secrets)
	if err != nil {
		t.Fatal(err)
	}
	local.stats.kinds.Store(3)
	local.stats.objects.Store(42)
	v := "v1.33.2"
	local.kubeVersion.last.Store(&v)
	if _, err := cs.resolve(t.Context(), v1alpha1.ApplicationDestination{Name: "prod"}, secrets); err != nil {
		t.Fatal(err)
	}
	var got []metrics.ClusterInfo
	cs.EachCluster(func(info metrics.ClusterInfo) { got = append(got, info) })
	want := []metrics.ClusterInfo{
		{Server: InClusterServer, Name: InClusterName, Version: "v1.33.2", Kinds: 3, Objects: 42},
		{Server: "https://prod.example.com:6443", Name: "prod"},
	}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b metrics.ClusterInfo) bool { return a.Server < b.Server })); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
}

// TestCacheStats counts what a destination's metadata cache holds and
// receives: one kind, its objects, and the changes its watch delivers
// (the initial listing and resyncs are no events, as in Argo CD).
func TestCacheStats(t *testing.T) {
	m := metrics.NewMetrics()
	s := &cacheStats{server: "https://prod.example.com", metrics: m}
	src := fcache.NewFakeControllerSource()
	object := func(name string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		}
	}
	src.Add(object("listed-1"))
	src.Add(object("listed-2"))
	inf := s.newInformer(src, object(""), 0, toolscache.Indexers{})
	go inf.Run(t.Context().Done())
	if !toolscache.WaitForCacheSync(t.Context().Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	src.Add(object("added"))
	src.Modify(object("listed-1"))
	src.Delete(object("listed-2"))
	events := m.ClusterEvents("https://prod.example.com", "", "ConfigMap")
	testutil.Eventually(t, "the watch's three changes counted", func() (bool, string) {
		got := fmt.Sprintf("kinds=%d objects=%d events=%g", s.kinds.Load(), s.objects.Load(), counterValue(t, events))
		return got == "kinds=1 objects=2 events=3", got
	})
}

func TestOperationEnded(t *testing.T) {
	now := metav1.NewTime(time.Unix(100, 0))
	later := metav1.NewTime(time.Unix(160, 0))
	state := func(phase v1alpha1.OperationPhase, finished *metav1.Time, msg string) *v1alpha1.OperationState {
		return &v1alpha1.OperationState{Phase: phase, StartedAt: now, FinishedAt: finished, Message: msg}
	}
	tests := []struct {
		name      string
		was, is   *v1alpha1.OperationState
		wantEnded bool
	}{
		{"no operation", nil, nil, false},
		{"running", nil, state(v1alpha1.OperationRunning, nil, "syncing"), false},
		{"succeeded after running", state(v1alpha1.OperationRunning, nil, "syncing"), state(v1alpha1.OperationSucceeded, &later, "done"), true},
		{"failed, first seen", nil, state(v1alpha1.OperationFailed, &now, "denied"), true},
		{"refused", state(v1alpha1.OperationSucceeded, &now, "done"), state(v1alpha1.OperationError, &later, "invalid"), true},
		{"the same result again", state(v1alpha1.OperationFailed, &now, "denied"), state(v1alpha1.OperationFailed, &now, "denied"), false},
		{"a new failure", state(v1alpha1.OperationFailed, &now, "denied"), state(v1alpha1.OperationFailed, &later, "denied"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig, app := &v1alpha1.Application{}, &v1alpha1.Application{}
			orig.Status.OperationState, app.Status.OperationState = tc.was, tc.is
			if got := operationEnded(orig, app); got != tc.wantEnded {
				t.Errorf("operationEnded = %v, want %v", got, tc.wantEnded)
			}
		})
	}
}

// counterValue reads a counter.
func counterValue(t *testing.T, c interface{ Write(*dto.Metric) error }) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
