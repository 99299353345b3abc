package audit

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	wgpolicy "github.com/tollgate-dev/tollgate/api/wgpolicyk8s/v1alpha2"
	"github.com/tollgate-dev/tollgate/policies"
)

// Names and labels of the reports the audit writes.
const (
	// ReportName is the name of the PolicyReport of each namespace and of
	// the ClusterPolicyReport.
	ReportName = "tollgate-audit"
	// FieldManager is the field manager of the reports' server-side apply.
	FieldManager = "tollgate-audit"
	// Source is the results' source.
	Source = "tollgate"
	// AnnotationOmitted, on a report, counts the results the report does
	// not list (MaxReportResults); its summary counts them all.
	AnnotationOmitted = "tollgate.dev/omitted-results"
)

// managedBy marks the reports the audit owns.
var managedBy = map[string]string{"app.kubernetes.io/managed-by": "tollgate"}

// tally holds, per namespace ("" for cluster-scoped objects), what the
// reports say: the summary and the listed results.
type tally struct {
	ns map[string]*nsTally
}

type nsTally struct {
	summary wgpolicy.PolicyReportSummary
	results []result
}

// result is one report result before its timestamp is set.
type result struct {
	ref       ObjectRef
	violation policies.Violation
	err       error
}

func newTally() *tally { return &tally{ns: map[string]*nsTally{}} }

func (t *tally) of(ns string) *nsTally {
	n := t.ns[ns]
	if n == nil {
		n = &nsTally{}
		t.ns[ns] = n
	}
	return n
}

// judged records the violations of one judged object (none: a pass).
func (t *tally) judged(ref ObjectRef, vs []policies.Violation) {
	n := t.of(ref.Namespace)
	if len(vs) == 0 {
		n.summary.Pass++
		return
	}
	for _, v := range vs {
		if v.Severity == policies.SeverityDeny {
			n.summary.Fail++
		} else {
			n.summary.Warn++
		}
		n.results = append(n.results, result{ref: ref, violation: v})
	}
}

// failed records an object that could not be judged.
func (t *tally) failed(ref ObjectRef, err error) {
	n := t.of(ref.Namespace)
	n.summary.Error++
	n.results = append(n.results, result{ref: ref, err: err})
}

// violations counts the violations t holds.
func (t *tally) violations() int {
	n := 0
	for _, ns := range t.ns {
		n += ns.summary.Fail + ns.summary.Warn
	}
	return n
}

// merge adds o's counts and results to t.
func (t *tally) merge(o *tally) {
	for ns, on := range o.ns {
		n := t.of(ns)
		n.summary.Pass += on.summary.Pass
		n.summary.Fail += on.summary.Fail
		n.summary.Warn += on.summary.Warn
		n.summary.Error += on.summary.Error
		n.results = append(n.results, on.results...)
	}
}

// reportResults turns n's results into report results, sorted by object
// and rule, at most limit of them; it returns how many were left out.
func (n *nsTally) reportResults(ts metav1.Timestamp, limit int) ([]wgpolicy.PolicyReportResult, int) {
	slices.SortFunc(n.results, func(x, y result) int {
		return cmp.Or(cmp.Compare(x.ref.Kind, y.ref.Kind), cmp.Compare(x.ref.Name, y.ref.Name),
			cmp.Compare(x.violation.Rule, y.violation.Rule), cmp.Compare(x.violation.Message, y.violation.Message))
	})
	kept := n.results[:min(len(n.results), limit)]
	out := make([]wgpolicy.PolicyReportResult, 0, len(kept))
	for _, r := range kept {
		rr := wgpolicy.PolicyReportResult{
			Source: Source, Category: "tollgate", Timestamp: ts, Scored: true,
			Subjects: []corev1.ObjectReference{{
				APIVersion: r.ref.APIVersion, Kind: r.ref.Kind, Namespace: r.ref.Namespace,
				Name: r.ref.Name, UID: types.UID(r.ref.UID),
			}},
		}
		switch {
		case r.err != nil:
			rr.Policy, rr.Rule, rr.Result, rr.Description = "evaluation", "evaluation", wgpolicy.ResultError, r.err.Error()
		case r.violation.Severity == policies.SeverityDeny:
			rr.Policy, rr.Rule, rr.Result, rr.Severity = r.violation.Rule, r.violation.Rule, wgpolicy.ResultFail, wgpolicy.SeverityHigh
			rr.Description = r.violation.Message
		default:
			rr.Policy, rr.Rule, rr.Result, rr.Severity = r.violation.Rule, r.violation.Rule, wgpolicy.ResultWarn, wgpolicy.SeverityMedium
			rr.Description = r.violation.Message
		}
		out = append(out, rr)
	}
	return out, len(n.results) - len(kept)
}

var (
	policyReportGVK        = wgpolicy.GroupVersion.WithKind("PolicyReport")
	clusterPolicyReportGVK = wgpolicy.GroupVersion.WithKind("ClusterPolicyReport")
)

// writeReports applies one report per namespace of t and deletes the
// audit's reports of namespaces that no longer hold an audited object. It
// returns a note for the log and the CLI; failures are noted, not
// returned: the audit's findings stand without them.
func (a *Auditor) writeReports(ctx context.Context, res *Result, t *tally) string {
	ts := metav1.Timestamp{Seconds: res.Started.Unix()}
	var errs []error
	written := 0
	for ns, n := range t.ns {
		results, omitted := n.reportResults(ts, a.opts.MaxReportResults)
		gvk := policyReportGVK
		if ns == "" {
			gvk = clusterPolicyReportGVK
		}
		err := a.applyReport(ctx, gvk, ns, n.summary, results, omitted)
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) && ns == "" {
			res.NoReportCRDs = true
			return "not written: the PolicyReport CRDs (wgpolicyk8s.io/v1alpha2) are not installed (config/policyreport)"
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		written++
	}
	deleted, err := a.deleteStale(ctx, t)
	if err != nil {
		errs = append(errs, err)
	}
	note := fmt.Sprintf("%d written, %d deleted", written, deleted)
	if len(errs) > 0 {
		note += fmt.Sprintf("; %d failed: %v", len(errs), errors.Join(errs...))
		res.Failures = append(res.Failures, Failure{Err: fmt.Errorf("write reports: %w", errors.Join(errs...))})
	}
	return note
}

// applyReport writes the report of namespace ns ("" for the cluster)
// with server-side apply: created once, then updated in place.
func (a *Auditor) applyReport(ctx context.Context, gvk schema.GroupVersionKind, ns string, summary wgpolicy.PolicyReportSummary, results []wgpolicy.PolicyReportResult, omitted int) error {
	md := metav1.ObjectMeta{Name: ReportName, Namespace: ns, Labels: managedBy}
	if omitted > 0 {
		md.Annotations = map[string]string{AnnotationOmitted: strconv.Itoa(omitted)}
	}
	var body any
	if ns == "" {
		body = &wgpolicy.ClusterPolicyReport{TypeMeta: metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}, ObjectMeta: md, Summary: summary, Results: results}
	} else {
		body = &wgpolicy.PolicyReport{TypeMeta: metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}, ObjectMeta: md, Summary: summary, Results: results}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode %s %s: %w", gvk.Kind, ns, err)
	}
	target := &unstructured.Unstructured{}
	target.SetGroupVersionKind(gvk)
	target.SetName(ReportName)
	target.SetNamespace(ns)
	err = a.opts.Client.Patch(ctx, target, client.RawPatch(types.ApplyPatchType, data), client.FieldOwner(FieldManager), client.ForceOwnership)
	if err != nil {
		return fmt.Errorf("apply %s %s: %w", gvk.Kind, cmp.Or(ns, ReportName), err)
	}
	return nil
}

// deleteStale deletes the audit's PolicyReports of namespaces t has no
// audited object in (deleted, or no longer holding a judged object), and
// its ClusterPolicyReport when no cluster-scoped object was judged.
func (a *Auditor) deleteStale(ctx context.Context, t *tally) (int, error) {
	deleted := 0
	if _, ok := t.ns[""]; !ok {
		cr := &unstructured.Unstructured{}
		cr.SetGroupVersionKind(clusterPolicyReportGVK)
		cr.SetName(ReportName)
		err := a.opts.Client.Delete(ctx, cr)
		switch {
		case err == nil:
			deleted++
		case !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err):
			return 0, fmt.Errorf("delete ClusterPolicyReport: %w", err)
		}
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(policyReportGVK.GroupVersion().WithKind("PolicyReportList"))
	if err := a.opts.Client.List(ctx, list, client.MatchingLabels(managedBy), client.MatchingFields{"metadata.name": ReportName}); err != nil {
		return 0, fmt.Errorf("list PolicyReports: %w", err)
	}
	var errs []error
	for i := range list.Items {
		r := &list.Items[i]
		if _, ok := t.ns[r.GetNamespace()]; ok {
			continue
		}
		if err := a.opts.Client.Delete(ctx, r); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("delete PolicyReport %s: %w", r.GetNamespace(), err))
			continue
		}
		deleted++
	}
	return deleted, errors.Join(errs...)
}
