package applicationset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// TestAppSetWriteAdoption: an existing Application of the generated name
// that no controller owns is adopted when it belongs to the generated
// Application's project, as Argo CD adopts it, and left as it is,
// reported, when it belongs to another; the set's other Applications are
// written either way.
func TestAppSetWriteAdoption(t *testing.T) {
	set := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Namespace: "argocd", UID: types.UID("set-uid")}}
	app := func(name, project, path string, owners ...metav1.OwnerReference) *v1alpha1.Application {
		return &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd", OwnerReferences: owners},
			Spec: v1alpha1.ApplicationSpec{
				Project:     project,
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/" + project, Path: path},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "billing"},
			},
		}
	}
	const refusal = `Application "billing" belongs to project "team-web"; ApplicationSet "team-a" generates it for project "team-a" and does not adopt it`
	type result struct {
		Project string
		Path    string
		// Owned is whether the ApplicationSet controls it.
		Owned bool
	}
	for name, tc := range map[string]struct {
		live      *v1alpha1.Application
		generated string // project of the generated billing
		policy    v1alpha1.ApplicationsSyncPolicy
		want      result
		refused   []string
	}{
		"another project is not adopted": {
			live: app("billing", "team-web", "web"), generated: "team-a",
			want:    result{Project: "team-web", Path: "web"},
			refused: []string{refusal},
		},
		"another project is not adopted under create-only either": {
			live: app("billing", "team-web", "web"), generated: "team-a", policy: v1alpha1.ApplicationsSyncPolicyCreateOnly,
			want:    result{Project: "team-web", Path: "web"},
			refused: []string{refusal},
		},
		"the same project is adopted": {
			live: app("billing", "team-a", "old"), generated: "team-a",
			want: result{Project: "team-a", Path: "generated", Owned: true},
		},
		"an empty project is the default project": {
			live: app("billing", "", "old"), generated: "default",
			want: result{Project: "default", Path: "generated", Owned: true},
		},
		"the set's own Application moves with its template": {
			live: app("billing", "team-web", "old", ownerReference(set)), generated: "team-a",
			want: result{Project: "team-a", Path: "generated", Owned: true},
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).WithObjects(tc.live).Build()
			r := &Reconciler{deps: Dependencies{Client: c}}
			s := set.DeepCopy()
			if tc.policy != "" {
				s.Spec.SyncPolicy = &v1alpha1.ApplicationSetSyncPolicy{ApplicationsSync: &tc.policy}
			}
			p := &appSetPass{set: s, names: map[string]bool{"billing": true, "web": true},
				admitted: []*v1alpha1.Application{app("billing", tc.generated, "generated"), app("web", tc.generated, "generated")}}
			if err := r.write(t.Context(), p); err != nil {
				t.Fatalf("write: %v", err)
			}
			if diff := cmp.Diff(tc.refused, p.refused); diff != "" {
				t.Errorf("refused (-want +got):\n%s", diff)
			}
			var got v1alpha1.Application
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: "argocd", Name: "billing"}, &got); err != nil {
				t.Fatal(err)
			}
			ref := metav1.GetControllerOf(&got)
			res := result{Project: got.Spec.Project, Path: got.Spec.Source.Path, Owned: ref != nil && ref.UID == set.UID}
			if diff := cmp.Diff(tc.want, res); diff != "" {
				t.Errorf("billing (-want +got):\n%s", diff)
			}
			if tc.refused != nil && got.ResourceVersion != tc.live.ResourceVersion {
				t.Errorf("billing written: resourceVersion %s, was %s", got.ResourceVersion, tc.live.ResourceVersion)
			}
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: "argocd", Name: "web"}, &v1alpha1.Application{}); err != nil {
				t.Errorf("the set's other Application: %v", err)
			}
		})
	}
}

// TestAppSetConditionsNotAdopted: an Application not adopted is an
// ApplicationValidationError, after the denials and before Argo CD's
// validation errors.
func TestAppSetConditionsNotAdopted(t *testing.T) {
	p := &appSetPass{generated: true, refused: []string{"Application \"billing\" belongs to project \"team-web\"; ..."},
		invalid: []string{"application references project x which does not exist"}}
	var got []v1alpha1.ApplicationSetCondition
	for _, c := range p.conditions() {
		if c.Type != v1alpha1.ApplicationSetConditionParametersGenerated {
			got = append(got, c)
		}
	}
	msg := "Application \"billing\" belongs to project \"team-web\"; ...\napplication references project x which does not exist"
	want := []v1alpha1.ApplicationSetCondition{
		{Type: v1alpha1.ApplicationSetConditionErrorOccurred, Status: v1alpha1.ApplicationSetConditionStatusTrue, Reason: v1alpha1.ApplicationSetReasonApplicationValidationError, Message: msg},
		{Type: v1alpha1.ApplicationSetConditionResourcesUpToDate, Status: v1alpha1.ApplicationSetConditionStatusFalse, Reason: v1alpha1.ApplicationSetReasonApplicationValidationError, Message: msg},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
}

// TestParamsText: a denial quotes the parameters of lists and clusters,
// and names the files of git files generators instead of quoting them.
func TestParamsText(t *testing.T) {
	for _, tc := range []struct {
		name string
		gen  reposerver.Generated
		want string
	}{
		{"list", reposerver.Generated{Params: map[string]any{"env": "dev"}}, `{"env":"dev"}`},
		{"files", reposerver.Generated{
			Params: map[string]any{"team": "red", "password": "hunter2"},
			Files: []reposerver.ParamFile{
				{RepoURL: "https://git.example.com/config.git", Path: "teams/red/config.json"},
				{RepoURL: "https://git.example.com/envs.git", Path: "prod.yaml"},
			},
		}, "read from teams/red/config.json of https://git.example.com/config.git, prod.yaml of https://git.example.com/envs.git (content not quoted)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := paramsText(tc.gen); got != tc.want {
				t.Errorf("paramsText = %q, want %q", got, tc.want)
			}
		})
	}
}
