package audit

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	wgpolicy "github.com/tollgate-dev/tollgate/api/wgpolicyk8s/v1alpha2"
	"github.com/tollgate-dev/tollgate/policies"
)

// TestTally: what each namespace's report says, sorted, capped, with
// every result counted in the summary.
func TestTally(t *testing.T) {
	web := ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Resource: "deployments", Namespace: "shop", Name: "web", UID: "u1"}
	db := ObjectRef{APIVersion: "v1", Kind: "Secret", Resource: "secrets", Namespace: "shop", Name: "db", UID: "u2"}
	node := ObjectRef{APIVersion: "v1", Kind: "Namespace", Resource: "namespaces", Name: "shop"}
	tl := newTally()
	part := newTally()
	part.judged(web, []policies.Violation{
		{Rule: "no-latest-tag", Severity: policies.SeverityDeny, Message: "pin it"},
		{Rule: "hpa-replicas-conflict", Severity: policies.SeverityWarn, Message: "drop replicas"},
	})
	part.judged(db, []policies.Violation{{Rule: "no-plaintext-secret", Severity: policies.SeverityDeny, Message: "seal it"}})
	part.judged(ObjectRef{Kind: "ConfigMap", Namespace: "shop", Name: "ok"}, nil)
	part.failed(node, errors.New("evaluate: timeout"))
	tl.merge(part)

	shop := tl.ns["shop"]
	if want := (wgpolicy.PolicyReportSummary{Pass: 1, Fail: 2, Warn: 1}); shop.summary != want {
		t.Errorf("shop summary %+v, want %+v", shop.summary, want)
	}
	ts := metav1.Timestamp{Seconds: 7}
	got, omitted := shop.reportResults(ts, 2)
	var lines []string
	for _, r := range got {
		lines = append(lines, string(r.Result)+" "+string(r.Severity)+" "+r.Policy+" "+r.Subjects[0].Kind+"/"+r.Subjects[0].Name+" "+string(r.Subjects[0].UID)+": "+r.Description)
	}
	want := []string{
		"warn medium hpa-replicas-conflict Deployment/web u1: drop replicas",
		"fail high no-latest-tag Deployment/web u1: pin it",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if omitted != 1 {
		t.Errorf("omitted %d, want 1 (the Secret's, over the limit of 2)", omitted)
	}
	cluster, _ := tl.ns[""].reportResults(ts, 10)
	if len(cluster) != 1 || cluster[0].Result != wgpolicy.ResultError || cluster[0].Description != "evaluate: timeout" || tl.ns[""].summary.Error != 1 {
		t.Errorf("cluster results %+v, want one error result", cluster)
	}
}

func TestObjectRefPath(t *testing.T) {
	for ref, want := range map[ObjectRef]string{
		{APIVersion: "apps/v1", Resource: "deployments", Namespace: "shop", Name: "web"}: "apis/apps/v1/namespaces/shop/deployments/web",
		{APIVersion: "v1", Resource: "secrets", Namespace: "shop", Name: "db"}:           "api/v1/namespaces/shop/secrets/db",
		{APIVersion: "v1", Resource: "namespaces", Name: "shop"}:                         "api/v1/namespaces/shop",
		{APIVersion: "rbac.authorization.k8s.io/v1", Resource: "clusterroles"}:           "apis/rbac.authorization.k8s.io/v1/clusterroles",
		{}: "",
	} {
		if got := ref.Path(); got != want {
			t.Errorf("%+v.Path() = %q, want %q", ref, got, want)
		}
	}
}

// TestReportsWithoutCRDs: a cluster without the PolicyReport CRDs gets no
// reports and a note saying so; the run's findings stand.
func TestReportsWithoutCRDs(t *testing.T) {
	noCRD := interceptor.Funcs{Patch: func(_ context.Context, _ client.WithWatch, obj client.Object, _ client.Patch, _ ...client.PatchOption) error {
		return &meta.NoKindMatchError{GroupKind: obj.GetObjectKind().GroupVersionKind().GroupKind(), SearchedVersions: []string{"v1alpha2"}}
	}}
	a := &Auditor{opts: Options{Client: fake.NewClientBuilder().WithInterceptorFuncs(noCRD).Build(), MaxReportResults: 10}}
	tl := newTally()
	tl.judged(ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}, []policies.Violation{{Rule: "no-latest-tag", Severity: policies.SeverityDeny}})
	res := &Result{}
	note := a.writeReports(t.Context(), res, tl)
	if !res.NoReportCRDs || note != "not written: the PolicyReport CRDs (wgpolicyk8s.io/v1alpha2) are not installed (config/policyreport)" || len(res.Failures) > 0 {
		t.Errorf("writeReports without the CRDs: %q, NoReportCRDs %v, failures %v", note, res.NoReportCRDs, res.Failures)
	}
}
