package authority

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
	"github.com/tollgate-dev/tollgate/policies"
)

// recorder is an API server that answers every request 404 and records
// them.
type recorder struct {
	mu       sync.Mutex
	requests []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.requests = append(r.requests, req.Method+" "+req.URL.Path)
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...)
}

// TestDiffDetailed: a diff reads the destination only when the project
// permits the Application's destination and every desired object; a
// refusal names each one and rule, and not one request reaches the
// destination.
func TestDiffDetailed(t *testing.T) {
	j, _ := newJudging(t)
	app, proj := teamApp()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	elsewhere := app.DeepCopy()
	elsewhere.Spec.Destination.Namespace = "billing"
	const destinationDenied = `[project-destination-denied] Application/argocd/web: Application "web" has destination (server "https://kubernetes.default.svc", namespace "billing"), which AppProject "team-web" does not permit; deploy to a destination listed in the project's spec.destinations or add this one there`
	tests := []struct {
		name    string
		app     *v1alpha1.Application
		project *v1alpha1.AppProject
		objs    []*unstructured.Unstructured
		// want are the refusal's lines; none when the diff reads.
		want []string
	}{
		{
			name:    "permitted objects are read",
			app:     app,
			project: proj,
			objs:    []*unstructured.Unstructured{object("v1", "ConfigMap", "web", "settings")},
		},
		{
			name:    "an object of another namespace refuses the whole diff",
			app:     app,
			project: proj,
			objs:    []*unstructured.Unstructured{object("v1", "ConfigMap", "web", "settings"), object("v1", "ConfigMap", "billing", "victim")},
			want:    []string{`[project-destination-denied] ConfigMap/billing/victim: ConfigMap "victim" of Application "web" has destination (server "https://kubernetes.default.svc", namespace "billing"), which AppProject "team-web" does not permit; deploy it into a namespace the project's spec.destinations list or add this one there`},
		},
		{
			name:    "a destination outside the project, even with only cluster-scoped objects",
			app:     elsewhere,
			project: proj,
			objs:    []*unstructured.Unstructured{object("v1", "Namespace", "", "billing")},
			want: []string{
				destinationDenied,
				`[project-resource-denied] Namespace/billing: Namespace "billing" of Application "web" is a cluster-scoped resource "Namespace" (core group) and AppProject "team-web" has no spec.clusterResourceWhitelist, so it permits no cluster-scoped resources; drop it from the Application or ask the project's owners to whitelist {group: "", kind: "Namespace"}`,
			},
		},
		{
			name:    "a destination outside the project, with nothing rendered",
			app:     elsewhere,
			project: proj,
			want:    []string{destinationDenied},
		},
		{
			name: "a missing project permits nothing, not even an empty diff",
			app:  app,
			want: []string{`[project-not-found] Application/argocd/web: AppProject "team-web" does not exist, so it permits nothing`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, rec := recorded(t, mapper, Options{Judging: j})
			_, err := a.For(tc.app, tc.project, Impersonation{}).DiffDetailed(t.Context(), tc.objs, nil)
			var got []string
			if refused, ok := err.(*RefusedError); ok {
				if refused.Verb != VerbDiff {
					t.Errorf("verb %q, want %q", refused.Verb, VerbDiff)
				}
				for _, v := range refused.Violations {
					got = append(got, ViolationLine(v))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("refusal (-want +got):\n%s", diff)
			}
			reads := rec.seen()
			switch {
			case tc.want != nil && len(reads) > 0:
				t.Errorf("a refused diff reached the destination: %v", reads)
			case tc.want == nil && (len(reads) == 0 || reads[0] != "GET /api/v1/namespaces/web/configmaps/settings"):
				t.Errorf("a permitted diff read %v, want the ConfigMap first", reads)
			}
		})
	}
}

// TestRefusedDiffMessage: a refused diff says that nothing live is shown.
func TestRefusedDiffMessage(t *testing.T) {
	r := &RefusedError{Verb: VerbDiff, Project: "team-web", Violations: []policies.Violation{{
		Rule: "protected-namespace", Object: policies.ObjectRef{Kind: "Secret", Namespace: "kube-system", Name: "token"}, Message: "protected",
	}}}
	if got, want := r.Error(), "diff refused: AppProject \"team-web\" does not permit it, no live object is shown:\n[protected-namespace] Secret/kube-system/token: protected"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// TestDoorScope: a Door writes only what its cluster's scope holds (Argo
// CD's namespaced mode): an object of another namespace, or a
// cluster-scoped one without ClusterResources, refuses the whole write
// with Argo CD's message before any request reaches the destination.
func TestDoorScope(t *testing.T) {
	j, _ := newJudging(t)
	app, proj := teamApp()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	settings, victim := object("v1", "ConfigMap", "web", "settings"), object("v1", "ConfigMap", "billing", "victim")
	ns := object("v1", "Namespace", "", "web")
	tests := []struct {
		name  string
		scope apply.Scope
		objs  []*unstructured.Unstructured
		want  string
	}{
		{"the whole cluster", apply.Scope{}, []*unstructured.Unstructured{settings, victim, ns}, ""},
		{"a managed namespace", apply.Scope{Namespaces: []string{"web"}}, []*unstructured.Unstructured{settings}, ""},
		{"another namespace", apply.Scope{Namespaces: []string{"web"}}, []*unstructured.Unstructured{settings, victim},
			`delete: namespace "billing" for ConfigMap "victim" is not managed`},
		{"cluster-scoped without clusterResources", apply.Scope{Namespaces: []string{"web"}}, []*unstructured.Unstructured{ns},
			`delete: cluster level Namespace "web" can not be managed when in namespaced mode`},
		{"cluster-scoped with clusterResources", apply.Scope{Namespaces: []string{"web"}, ClusterResources: true}, []*unstructured.Unstructured{ns}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, rec := recorded(t, mapper, Options{Judging: j, Apply: apply.Options{Scope: tc.scope}})
			// Only the scope is under test: the project may refuse
			// what the scope lets through, never the other way.
			_, err := a.For(app, proj, Impersonation{}).writable(t.Context(), "delete", tc.objs)
			if tc.want == "" {
				if err != nil && !IsRefused(err) {
					t.Errorf("error %v, want none but the project's", err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if reads := rec.seen(); len(reads) > 0 {
				t.Errorf("a refused write reached the destination: %v", reads)
			}
		})
	}
}

// TestDoorJudgesHookNames: a hook with only generateName is judged under
// the name the sync writes it with, so a name pattern of the project's
// blacklist refuses it; the wave reaches nothing.
func TestDoorJudgesHookNames(t *testing.T) {
	j, _ := newJudging(t)
	app, proj := teamApp()
	proj.Spec.ClusterResourceWhitelist = []v1alpha1.ClusterResourceRestrictionItem{{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}}
	proj.Spec.ClusterResourceBlacklist = []v1alpha1.ClusterResourceRestrictionItem{{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "platform-*"}}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, meta.RESTScopeRoot)
	hook := object("rbac.authorization.k8s.io/v1", "ClusterRole", "", "")
	hook.SetGenerateName("platform-")
	hook.SetAnnotations(map[string]string{"argocd.argoproj.io/hook": "PreSync"})
	waves, err := plan.Build([]*unstructured.Unstructured{hook})
	if err != nil {
		t.Fatal(err)
	}
	a, rec := recorded(t, mapper, Options{Judging: j})
	_, err = a.For(app, proj, Impersonation{}).ApplyWave(t.Context(), waves[0], apply.WaveOptions{App: "web", SyncID: "1700000000"})
	if err == nil || !IsRefused(err) || !strings.Contains(err.Error(), "ClusterRole/platform-1700000000-presync") {
		t.Errorf("error %v, want the hook refused under its written name", err)
	}
	if reads := rec.seen(); len(reads) > 0 {
		t.Errorf("a refused write reached the destination: %v", reads)
	}
}

// recorded is an authority with opts whose destination is a server that
// records every request it gets.
func recorded(t *testing.T, mapper meta.RESTMapper, opts Options) (*Authority, *recorder) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	a, err := New(Connection{Config: &rest.Config{Host: srv.URL}, Scheme: clientgoscheme.Scheme, Mapper: mapper}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a, rec
}
