package devstack

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AuditInterval is how often the dev stack's webhook audits the cluster
// (tollgate dev sets --audit-interval).
const AuditInterval = 10 * time.Second

// tourAudit removes the webhook configuration for a moment, as if the
// webhook had not been installed yet, creates a latest-tagged Deployment
// (nothing judges it), puts the configuration back, and waits for the
// audit loop's PolicyReport to list it; then deletes it and waits for the
// result to go.
func (s *Stack) tourAudit(ctx context.Context, con *Console, _ []string) error {
	const ns, name = "default", "tour-before-the-webhook"
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := s.Client.Get(ctx, client.ObjectKey{Name: "tollgate"}, &vwc); err != nil {
		return fmt.Errorf("get the webhook configuration: %w", err)
	}
	con.Printf("   kubectl delete validatingwebhookconfiguration tollgate   (as if the webhook were not installed yet)")
	if err := s.Client.Delete(ctx, &vwc); err != nil {
		return fmt.Errorf("delete the webhook configuration: %w", err)
	}
	d := tourDeployment(ns, name, "nginx:latest")
	con.Printf("   kubectl create deployment %s --image=nginx:latest -n %s", name, ns)
	// The API server drops the webhook from its watch of the
	// configurations a moment after the delete: until then the webhook
	// still judges (and denies) the create, so it is retried.
	createErr := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := s.Client.Create(ctx, d.DeepCopy())
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "admission webhook") {
			return false, nil
		}
		return err == nil, err
	})
	restored := vwc.DeepCopy()
	restored.ObjectMeta = metav1.ObjectMeta{Name: vwc.Name, Labels: vwc.Labels, Annotations: vwc.Annotations}
	if err := s.Client.Create(ctx, restored); err != nil {
		return fmt.Errorf("put the webhook configuration back: %w", err)
	}
	if createErr != nil {
		return fmt.Errorf("create deployment %s with no webhook: %w", name, createErr)
	}
	con.Printf("   ok: admitted, unjudged; the webhook configuration is back")
	con.Printf("   the webhook's audit loop (every %s here, 10m by default) judges what is stored: kubectl get policyreport -n %s tollgate-audit -o yaml", AuditInterval, ns)
	want := "fail no-latest-tag Deployment/" + name
	if err := s.waitAuditResult(ctx, ns, want, true); err != nil {
		return err
	}
	s.catchUp(ctx)
	con.Printf("   ok: PolicyReport %s/tollgate-audit lists %s", ns, want)
	con.Printf("   kubectl delete deployment %s -n %s   (the fix)", name, ns)
	if err := s.Client.Delete(ctx, d); err != nil {
		return fmt.Errorf("delete deployment %s: %w", name, err)
	}
	if err := s.waitAuditResult(ctx, ns, want, false); err != nil {
		return err
	}
	s.catchUp(ctx)
	con.Printf("   ok: the next audit removed the result; tollgate audit runs the same check from a terminal")
	return nil
}

// waitAuditResult waits until the audit's PolicyReport of ns lists result
// ("result rule Kind/name"), or no longer does when present is false.
func (s *Stack) waitAuditResult(ctx context.Context, ns, result string, present bool) error {
	err := poll(ctx, auditTimeout, func(ctx context.Context) (bool, string, error) {
		r := &unstructured.Unstructured{}
		r.SetAPIVersion("wgpolicyk8s.io/v1alpha2")
		r.SetKind("PolicyReport")
		err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "tollgate-audit"}, r)
		if apierrors.IsNotFound(err) {
			// No report: nothing judged is left in ns.
			return !present, "no PolicyReport", nil
		}
		if err != nil {
			return false, err.Error(), nil
		}
		got := reportResults(r)
		return slices.Contains(got, result) == present, strings.Join(got, "; "), nil
	})
	if err != nil {
		verb := "list"
		if !present {
			verb = "drop"
		}
		return fmt.Errorf("the audit's PolicyReport %s/tollgate-audit did not %s %q: %w", ns, verb, result, err)
	}
	return nil
}

// reportResults lists a PolicyReport's results as "result rule Kind/name".
func reportResults(r *unstructured.Unstructured) []string {
	results, _, _ := unstructured.NestedSlice(r.Object, "results")
	var out []string
	for _, res := range results {
		m, _ := res.(map[string]any)
		subjects, _ := m["resources"].([]any)
		for _, sub := range subjects {
			ref, _ := sub.(map[string]any)
			out = append(out, fmt.Sprintf("%v %v %v/%v", m["result"], m["policy"], ref["kind"], ref["name"]))
		}
	}
	return out
}
