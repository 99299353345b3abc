package ui

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/wgpolicyk8s/v1alpha2"
)

// auditRow is one result of a PolicyReport.
type auditRow struct {
	Namespace, Rule, Result, Severity, Object, Message string
}

// auditPage shows the results of the audit's PolicyReports (and of any
// other source writing them) that p may list.
func (s *Server) auditPage(w http.ResponseWriter, r *http.Request, p *person) {
	ctx := r.Context()
	rows, notes, err := s.reports(ctx, p)
	if err != nil {
		s.fail(w, r, p, err)
		return
	}
	q := r.URL.Query()
	ns, result := q.Get("namespace"), q.Get("result")
	namespaces := []string{}
	for _, row := range rows {
		if !slices.Contains(namespaces, row.Namespace) {
			namespaces = append(namespaces, row.Namespace)
		}
	}
	slices.Sort(namespaces)
	counts := map[string]int{}
	for _, row := range rows {
		counts[row.Result]++
	}
	shown := slices.DeleteFunc(slices.Clone(rows), func(row auditRow) bool {
		return ns != "" && row.Namespace != ns || result != "" && row.Result != result
	})
	s.render(w, r, p, http.StatusOK, "audit", view{Title: "Audit", Data: map[string]any{
		"Rows": shown, "Total": len(rows), "Counts": counts, "Namespaces": namespaces,
		"Namespace": ns, "Result": result, "Notes": notes,
	}})
}

// reports reads the PolicyReports and ClusterPolicyReports p may list:
// everywhere in one call when allowed, else namespace by namespace.
func (s *Server) reports(ctx context.Context, p *person) ([]auditRow, []string, error) {
	var rows []auditRow
	var notes []string
	var list v1alpha2.PolicyReportList
	switch err := p.c.List(ctx, &list); {
	case meta.IsNoMatchError(err):
		return nil, []string{"The PolicyReport CRDs are not installed (config/policyreport): the audit loop has nowhere to write."}, nil
	case apierrors.IsForbidden(err):
		var nsList []string
		all, _ := s.allNamespaces(ctx) // none listed: none readable
		for _, ns := range all {
			var l v1alpha2.PolicyReportList
			if err := p.c.List(ctx, &l, client.InNamespace(ns)); err == nil {
				list.Items = append(list.Items, l.Items...)
				nsList = append(nsList, ns)
			}
		}
		if len(nsList) == 0 {
			notes = append(notes, "You may not list PolicyReports in any namespace.")
		}
	case err != nil:
		return nil, nil, fmt.Errorf("list policyreports: %w", err)
	}
	for _, rep := range list.Items {
		for _, res := range rep.Results {
			rows = append(rows, newAuditRow(rep.Namespace, res))
		}
	}
	var cluster v1alpha2.ClusterPolicyReportList
	switch err := p.c.List(ctx, &cluster); {
	case apierrors.IsForbidden(err):
		notes = append(notes, "You may not list ClusterPolicyReports: results for cluster-scoped objects are not shown.")
	case err != nil && !meta.IsNoMatchError(err):
		return nil, nil, fmt.Errorf("list clusterpolicyreports: %w", err)
	}
	for _, rep := range cluster.Items {
		for _, res := range rep.Results {
			rows = append(rows, newAuditRow("", res))
		}
	}
	slices.SortStableFunc(rows, func(a, b auditRow) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Object, b.Object), cmp.Compare(a.Rule, b.Rule))
	})
	return rows, notes, nil
}

func newAuditRow(namespace string, res v1alpha2.PolicyReportResult) auditRow {
	row := auditRow{Namespace: cmp.Or(namespace, "(cluster)"), Rule: cmp.Or(res.Rule, res.Policy), Result: string(res.Result), Severity: string(res.Severity), Message: res.Description}
	for _, o := range res.Subjects {
		ref := o.Kind + " "
		if o.Namespace != "" {
			ref += o.Namespace + "/"
		}
		row.Object = ref + o.Name
	}
	return row
}

// allNamespaces are the cluster's namespaces, listed with the UI's own
// identity.
func (s *Server) allNamespaces(ctx context.Context) ([]string, error) {
	var list corev1.NamespaceList
	if err := s.own.List(ctx, &list); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list.Items))
	for _, ns := range list.Items {
		out = append(out, ns.Name)
	}
	return out, nil
}
