package authority

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/policies"
)

// countingEvaluator counts the inputs it evaluates.
type countingEvaluator struct {
	e      *policies.Evaluator
	inputs atomic.Int64
}

func (c *countingEvaluator) EvaluateAll(ctx context.Context, ins []policies.Input) ([]policies.Decision, error) {
	c.inputs.Add(int64(len(ins)))
	return c.e.EvaluateAll(ctx, ins)
}

func newJudging(t *testing.T) (Judging, *countingEvaluator) {
	t.Helper()
	e, err := policies.New(t.Context(), policies.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	c := &countingEvaluator{e: e}
	return Judging{Evaluator: c, Namespace: "argocd"}, c
}

func teamApp() (*v1alpha1.Application, *v1alpha1.AppProject) {
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd"},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "team-web",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/web.git", Path: "k8s"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"},
		},
	}
	proj := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "team-web", Namespace: "argocd"},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  []string{"https://git.example.com/*"},
			Destinations: []v1alpha1.ApplicationDestination{{Server: "https://kubernetes.default.svc", Namespace: "web"}},
		},
	}
	return app, proj
}

func object(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func TestPermit(t *testing.T) {
	j, _ := newJudging(t)
	app, proj := teamApp()
	tests := []struct {
		name    string
		project *v1alpha1.AppProject
		objs    []*unstructured.Unstructured
		// want are the refusal's lines; none when permitted.
		want []string
	}{
		{
			name:    "objects in the permitted namespace",
			project: proj,
			objs:    []*unstructured.Unstructured{object("v1", "ConfigMap", "web", "settings"), object("apps/v1", "Deployment", "web", "web")},
		},
		{
			name:    "live object of another namespace, whatever it claims",
			project: proj,
			objs:    []*unstructured.Unstructured{object("v1", "ConfigMap", "web", "settings"), object("v1", "ConfigMap", "billing", "victim")},
			want:    []string{`[project-destination-denied] ConfigMap/billing/victim: ConfigMap "victim" of Application "web" has destination (server "https://kubernetes.default.svc", namespace "billing"), which AppProject "team-web" does not permit; deploy it into a namespace the project's spec.destinations list or add this one there`},
		},
		{
			name:    "namespace metadata without Namespace in the cluster whitelist",
			project: proj,
			objs:    []*unstructured.Unstructured{object("v1", "Namespace", "", "web")},
			want:    []string{`[project-resource-denied] Namespace/web: Namespace "web" of Application "web" is a cluster-scoped resource "Namespace" (core group) and AppProject "team-web" has no spec.clusterResourceWhitelist, so it permits no cluster-scoped resources; drop it from the Application or ask the project's owners to whitelist {group: "", kind: "Namespace"}`},
		},
		{
			name:    "the control plane's namespace",
			project: proj,
			objs:    []*unstructured.Unstructured{object("v1", "Secret", "argocd", "argocd-secret")},
			want: []string{
				`[project-destination-denied] Secret/argocd/argocd-secret: Secret "argocd-secret" of Application "web" has destination (server "https://kubernetes.default.svc", namespace "argocd"), which AppProject "team-web" does not permit; deploy it into a namespace the project's spec.destinations list or add this one there`,
			},
		},
		{
			name: "missing project permits nothing",
			objs: []*unstructured.Unstructured{object("v1", "ConfigMap", "web", "settings")},
			want: []string{`[project-not-found] Application/argocd/web: AppProject "team-web" does not exist, so it permits nothing`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := j.bind(app, tc.project, nil).permit(t.Context(), "prune", tc.objs, false)
			var got []string
			var refused *RefusedError
			if errors.As(err, &refused) {
				for _, v := range refused.Violations {
					got = append(got, ViolationLine(v))
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("refusal (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPermitAfterJudge checks that objects the gate judged are not
// evaluated again when written, and that others are.
func TestPermitAfterJudge(t *testing.T) {
	j, count := newJudging(t)
	app, proj := teamApp()
	b := j.bind(app, proj, nil)
	desired := []*unstructured.Unstructured{object("v1", "ConfigMap", "web", "settings"), object("v1", "ConfigMap", "billing", "other")}
	v, _, err := b.judge(t.Context(), desired)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Denied) != 1 {
		t.Fatalf("the gate denied %v, want the ConfigMap of billing", v.Denied)
	}
	judged := count.inputs.Load()
	// A copy of a judged object is the same object to the boundary rules.
	if err := b.permit(t.Context(), "sync", []*unstructured.Unstructured{desired[0].DeepCopy()}, false); err != nil {
		t.Fatalf("permit judged object: %v", err)
	}
	if n := count.inputs.Load() - judged; n != 0 {
		t.Errorf("a judged object was evaluated again (%d inputs)", n)
	}
	if err := b.permit(t.Context(), "sync", []*unstructured.Unstructured{object("v1", "ConfigMap", "web", "new")}, false); err != nil {
		t.Fatalf("permit new object: %v", err)
	}
	if n := count.inputs.Load() - judged; n != 2 {
		t.Errorf("a new object was evaluated with %d inputs, want 2 (the Application and it)", n)
	}
	// Objects admitted on an earlier verdict are not evaluated either.
	admitted := object("v1", "Service", "web", "web")
	b.admit([]*unstructured.Unstructured{admitted})
	before := count.inputs.Load()
	if err := b.permit(t.Context(), "sync", []*unstructured.Unstructured{admitted}, false); err != nil || count.inputs.Load() != before {
		t.Errorf("permit of an admitted object: %v, %d inputs evaluated", err, count.inputs.Load()-before)
	}
	if err := b.permit(t.Context(), "sync", desired, false); !IsRefused(err) {
		t.Errorf("permit of a denied object = %v, want a refusal", err)
	}
}
