package metrics

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

func TestDescribeRequest(t *testing.T) {
	tests := []struct {
		method, url               string
		verb, resource, namespace string
	}{
		{"GET", "/api/v1/namespaces/ns/configmaps/settings", VerbGet, "configmaps", "ns"},
		{"GET", "/api/v1/namespaces/ns/configmaps", VerbList, "configmaps", "ns"},
		{"GET", "/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=5", VerbWatch, "configmaps", "ns"},
		{"GET", "/apis/apps/v1/deployments?labelSelector=a%3Db&watch=1", VerbWatch, "deployments", ""},
		{"GET", "/apis/apps/v1/deployments?labelSelector=watch%3Dtrue", VerbList, "deployments", ""},
		{"PATCH", "/apis/apps/v1/namespaces/ns/deployments/web?fieldManager=tollgate&dryRun=All", VerbPatch, "deployments", "ns"},
		{"PATCH", "/apis/apps/v1/namespaces/ns/deployments/web/status", VerbPatch, "deployments", "ns"},
		{"POST", "/api/v1/namespaces/ns/pods", VerbCreate, "pods", "ns"},
		{"PUT", "/apis/rbac.authorization.k8s.io/v1/clusterroles/view", VerbUpdate, "clusterroles", ""},
		{"DELETE", "/apis/batch/v1/namespaces/ns/jobs/hook", VerbDelete, "jobs", "ns"},
		// A Namespace is not namespaced; its own subresources neither.
		{"GET", "/api/v1/namespaces/ns", VerbGet, "namespaces", ""},
		{"GET", "/api/v1/namespaces", VerbList, "namespaces", ""},
		{"PUT", "/api/v1/namespaces/ns/finalize", VerbUpdate, "namespaces", ""},
		{"GET", "/api/v1/namespaces/ns/status", VerbGet, "namespaces", ""},
		// Discovery and others name no resource.
		{"GET", "/api", VerbGet, "", ""},
		{"GET", "/apis/apps/v1", VerbGet, "", ""},
		{"GET", "/version", VerbGet, "", ""},
		// A server URL with a path (a proxy) in front.
		{"GET", "/k8s/clusters/c-1/api/v1/namespaces/ns/secrets/s", VerbGet, "secrets", "ns"},
		{"OPTIONS", "/api/v1/pods", VerbUnknown, "pods", ""},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.url, func(t *testing.T) {
			path, query, _ := strings.Cut(tc.url, "?")
			verb, resource, namespace := describeRequest(tc.method, path, query)
			if diff := cmp.Diff([]string{tc.verb, tc.resource, tc.namespace}, []string{verb, resource, namespace}); diff != "" {
				t.Errorf("verb, resource, namespace (-want +got):\n%s", diff)
			}
		})
	}
}

// answer is a transport that answers every request with code, or fails
// when code is 0.
type answer int

func (a answer) RoundTrip(*http.Request) (*http.Response, error) {
	if a == 0 {
		return nil, errors.New("connection refused")
	}
	return &http.Response{StatusCode: int(a)}, nil
}

func TestKubernetesRequests(t *testing.T) {
	m := NewMetrics()
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "guestbook"}}
	dryRun := app.DeepCopy()
	dryRun.Spec.Project = "team"
	dryRun.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{DryRun: true}}
	do := func(ctx context.Context, code answer, method, url string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = m.KubernetesRequests("https://prod.example.com")(code).RoundTrip(req)
	}
	do(WithApplication(t.Context(), app), 200, "PATCH", "https://prod.example.com/apis/apps/v1/namespaces/web/deployments/web")
	do(WithApplication(t.Context(), app), 200, "PATCH", "https://prod.example.com/apis/apps/v1/namespaces/web/deployments/web")
	do(WithApplication(t.Context(), dryRun), 404, "GET", "https://prod.example.com/api/v1/namespaces/web/configmaps/settings")
	do(WithoutApplication(WithApplication(t.Context(), app)), 200, "GET", "https://prod.example.com/api/v1/pods?watch=true")
	do(t.Context(), 0, "GET", "https://prod.example.com/api")
	want := `
# HELP argocd_app_k8s_request_total Requests to destination clusters' API servers, by the Application that made them (empty for the cluster caches and discovery), verb, resource and response code (Argo CD's metric).
# TYPE argocd_app_k8s_request_total counter
argocd_app_k8s_request_total{dry_run="false",name="",namespace="",project="",resource_kind="",resource_namespace="",response_code="0",server="https://prod.example.com",verb="Get"} 1
argocd_app_k8s_request_total{dry_run="false",name="",namespace="",project="",resource_kind="pods",resource_namespace="",response_code="200",server="https://prod.example.com",verb="Watch"} 1
argocd_app_k8s_request_total{dry_run="false",name="guestbook",namespace="argocd",project="default",resource_kind="deployments",resource_namespace="web",response_code="200",server="https://prod.example.com",verb="Patch"} 2
argocd_app_k8s_request_total{dry_run="true",name="guestbook",namespace="argocd",project="team",resource_kind="configmaps",resource_namespace="web",response_code="404",server="https://prod.example.com",verb="Get"} 1
`
	if diff := cmp.Diff(strings.TrimLeft(want, "\n"), exposition(t, m.argo.k8sRequests)); diff != "" {
		t.Errorf("exposition (-want +got):\n%s", diff)
	}
}

// respond answers every request with one response, allocating nothing.
type respond struct{ resp *http.Response }

func (r respond) RoundTrip(*http.Request) (*http.Response, error) { return r.resp, nil }

// TestKubernetesRequestsAllocateNothing holds the counting on the apply
// path free of allocations once a label set is in use.
func TestKubernetesRequestsAllocateNothing(t *testing.T) {
	rt := NewMetrics().KubernetesRequests("https://prod.example.com")(respond{&http.Response{StatusCode: 200}})
	ctx := WithApplication(t.Context(), &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "guestbook"}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, "https://prod.example.com/apis/apps/v1/namespaces/web/deployments/web?fieldManager=tollgate", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = rt.RoundTrip(req) }); n != 0 {
		t.Errorf("counting a request allocates %v times, want 0", n)
	}
}

func BenchmarkKubernetesRequests(b *testing.B) {
	rt := NewMetrics().KubernetesRequests("https://prod.example.com")(respond{&http.Response{StatusCode: 200}})
	ctx := WithApplication(b.Context(), &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "guestbook"}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, "https://prod.example.com/apis/apps/v1/namespaces/web/deployments/web?fieldManager=tollgate", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = rt.RoundTrip(req)
	}
}
