package applicationset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// The tests of this file prove the ApplicationSet fields the
// compatibility ledger (internal/compat) lists as honoured and no other
// test exercises.

// writeOwned writes generated over live, an Application set already owns,
// and returns the Application as written.
func writeOwned(t *testing.T, set *v1alpha1.ApplicationSet, live, generated *v1alpha1.Application) *v1alpha1.Application {
	t.Helper()
	live = live.DeepCopy()
	live.OwnerReferences = []metav1.OwnerReference{ownerReference(set)}
	c := fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).WithObjects(live).Build()
	r := &Reconciler{deps: Dependencies{Client: c}}
	p := &appSetPass{set: set, names: map[string]bool{generated.Name: true}, admitted: []*v1alpha1.Application{generated.DeepCopy()}}
	if err := r.write(t.Context(), p); err != nil {
		t.Fatalf("write: %v", err)
	}
	if len(p.refused) > 0 {
		t.Fatalf("refused: %v", p.refused)
	}
	var got v1alpha1.Application
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(live), &got); err != nil {
		t.Fatal(err)
	}
	return &got
}

// compatSet is an ApplicationSet of namespace argocd with spec.
func compatSet(spec v1alpha1.ApplicationSetSpec) *v1alpha1.ApplicationSet {
	return &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: "argocd", UID: types.UID("set-uid")}, Spec: spec}
}

// TestAppSetPreservedFields: an update keeps the live values of the
// annotations and labels preservedFields names (and of Argo CD's own
// annotations such as argocd.argoproj.io/refresh), and otherwise writes
// the generated ones: other live annotations and labels go.
func TestAppSetPreservedFields(t *testing.T) {
	app := func(annotations, labels map[string]string) *v1alpha1.Application {
		return &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd", Annotations: annotations, Labels: labels},
			Spec: v1alpha1.ApplicationSpec{
				Project:     "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/config.git", Path: "web"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"},
			},
		}
	}
	live := app(
		map[string]string{"example.com/owner": "alice", "example.com/note": "by hand", v1alpha1.AnnotationKeyRefresh: "hard"},
		map[string]string{"tier": "gold", "by-hand": "yes"},
	)
	generated := app(map[string]string{"example.com/owner": "generated", "generated": "1"}, map[string]string{"app": "web", "tier": "bronze"})
	type meta struct{ Annotations, Labels map[string]string }
	for name, tc := range map[string]struct {
		preserved *v1alpha1.ApplicationPreservedFields
		want      meta
	}{
		"preserved": {
			preserved: &v1alpha1.ApplicationPreservedFields{Annotations: []string{"example.com/owner"}, Labels: []string{"tier"}},
			want: meta{
				Annotations: map[string]string{"example.com/owner": "alice", "generated": "1", v1alpha1.AnnotationKeyRefresh: "hard"},
				Labels:      map[string]string{"app": "web", "tier": "gold"},
			},
		},
		"not preserved": {
			want: meta{
				Annotations: map[string]string{"example.com/owner": "generated", "generated": "1", v1alpha1.AnnotationKeyRefresh: "hard"},
				Labels:      map[string]string{"app": "web", "tier": "bronze"},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := writeOwned(t, compatSet(v1alpha1.ApplicationSetSpec{PreservedFields: tc.preserved}), live, generated)
			if diff := cmp.Diff(tc.want, meta{Annotations: got.Annotations, Labels: got.Labels}); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAppSetIgnoreApplicationDifferences: an update leaves the fields
// ignoreApplicationDifferences names (JSON pointers and jq paths) as they
// are live, for the Application a rule names or, without a name, for
// every one; the other fields are written as generated.
func TestAppSetIgnoreApplicationDifferences(t *testing.T) {
	app := func(name, revision, tag, replicas string) *v1alpha1.Application {
		return &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd"},
			Spec: v1alpha1.ApplicationSpec{
				Project: "default",
				Source: &v1alpha1.ApplicationSource{
					RepoURL: "https://git.example.com/config.git", Path: "chart", TargetRevision: revision,
					Helm: &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{
						{Name: "image.tag", Value: tag}, {Name: "replicas", Value: replicas},
					}},
				},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: name},
			},
		}
	}
	rules := []v1alpha1.ApplicationSetResourceIgnoreDifferences{
		{Name: "web", JSONPointers: []string{"/spec/source/targetRevision"}},
		{JQPathExpressions: []string{`.spec.source.helm.parameters[] | select(.name == "image.tag") | .value`}},
	}
	set := compatSet(v1alpha1.ApplicationSetSpec{IgnoreApplicationDifferences: rules})
	type result struct{ Revision, Tag, Replicas string }
	for name, want := range map[string]result{
		// The pointer names web: its live revision stays. The jq path
		// holds for both: the live image tag stays, while the replicas
		// beside it in the same list are written.
		"web": {Revision: "hotfix", Tag: "v9", Replicas: "3"},
		"api": {Revision: "main", Tag: "v9", Replicas: "3"},
	} {
		t.Run(name, func(t *testing.T) {
			got := writeOwned(t, set, app(name, "hotfix", "v9", "1"), app(name, "main", "v1", "3"))
			params := got.Spec.Source.Helm.Parameters
			if len(params) != 2 {
				t.Fatalf("helm parameters %v, want two", params)
			}
			res := result{Revision: got.Spec.Source.TargetRevision, Tag: params[0].Value, Replicas: params[1].Value}
			if diff := cmp.Diff(want, res); diff != "" {
				t.Errorf("written (-want +got):\n%s", diff)
			}
		})
	}
}
