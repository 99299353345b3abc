package webhook

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/tollgate-dev/tollgate/policies"
)

func TestDecideProjectTightening(t *testing.T) {
	before := appProject("team", "team-a", "team-b")
	after := appProject("team", "team-a")
	apps := []map[string]any{
		application("a", "team", "team-a"),
		application("b", "team", "team-b"),
		with(application("c", "team", "team-b"), "team-b", "metadata", "namespace"),
		application("d", "other", "team-b"), // another project: not affected
	}
	// c lives outside argocd; its project must list its namespace.
	before = with(before, []any{"team-b"}, "spec", "sourceNamespaces")
	after = with(after, []any{"team-b"}, "spec", "sourceNamespaces")

	tests := []struct {
		name    string
		req     admission.Request
		maxWarn int
		want    summary
		// wantCount is tollgate_project_tightening_violations_total.
		wantCount float64
	}{
		{
			name: "narrowed destinations warn per broken application",
			req:  request(admissionv1.Update, after, before),
			want: warned(
				`application "b" would violate [project-destination-denied]`,
				`application "team-b/c" would violate [project-destination-denied]`,
			),
			wantCount: 2,
		},
		{
			// As a client's UPDATE carries them: the stored project's
			// uid and resourceVersion on both objects, other content.
			name: "a change with the stored uid and resourceVersion",
			req: request(admissionv1.Update,
				with(with(after, "u-team", "metadata", "uid"), "7", "metadata", "resourceVersion"),
				with(with(before, "u-team", "metadata", "uid"), "7", "metadata", "resourceVersion")),
			want: warned(
				`application "b" would violate [project-destination-denied]`,
				`application "team-b/c" would violate [project-destination-denied]`,
			),
			wantCount: 2,
		},
		{
			name:    "warnings past the limit are summarized",
			req:     request(admissionv1.Update, after, before),
			maxWarn: 1,
			want: warned(
				`application "b" would violate [project-destination-denied]`,
				`1 more Applications would violate AppProject "team" after this change`,
			),
			wantCount: 2,
		},
		{
			name: "widening warns about nothing",
			req:  request(admissionv1.Update, before, after),
			want: allowed,
		},
		{
			name: "create warns about applications waiting for the project",
			req:  request(admissionv1.Create, after, nil),
			want: warned(
				`application "b" would violate [project-destination-denied]`,
				`application "team-b/c" would violate [project-destination-denied]`,
			),
			wantCount: 2,
		},
		{
			name: "delete warns while applications use the project",
			req:  request(admissionv1.Delete, nil, before),
			want: warned(`AppProject "team" is still used by 3 Application(s): "a", "b", "team-b/c"; Argo CD stops reconciling them (project-not-found) until the project is recreated or they move to another project`),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Evaluator = evaluator(t)
			opts.Reader = newReader(t, append([]map[string]any{before}, apps...)...)
			opts.MaxProjectWarnings = tt.maxWarn
			h, err := NewHandler(opts)
			if err != nil {
				t.Fatal(err)
			}
			resp := decide(t, h, tt.req)
			if diff := cmp.Diff(tt.want, summarize(resp)); diff != "" {
				t.Errorf("Decide() (-want +got):\n%s\nwarnings: %q", diff, resp.Warnings)
			}
			if got := counterValue(t, h.metrics.tighteningViolations); got != tt.wantCount {
				t.Errorf("tollgate_project_tightening_violations_total = %v, want %v", got, tt.wantCount)
			}
		})
	}
}

func TestDecideProjectExistingApplications(t *testing.T) {
	apps := []map[string]any{application("a", "team", "team-a"), application("b", "team", "team-a")}
	var got []string
	eval := evaluatorFunc(func(ctx context.Context, in policies.Input) (policies.Decision, error) {
		if stringAt(in.Object, "kind") == "AppProject" {
			for _, a := range in.Context.ExistingApplications {
				got = append(got, stringAt(a, "metadata", "name"))
			}
		}
		return policies.Decision{}, nil
	})
	opts := DefaultOptions()
	opts.Evaluator = eval
	opts.Reader = newReader(t, apps...)
	h, err := NewHandler(opts)
	if err != nil {
		t.Fatal(err)
	}
	resp := decide(t, h, request(admissionv1.Create, appProject("team", "team-a"), nil))
	if !resp.Allowed {
		t.Fatalf("Decide() denied: %s", message(resp))
	}
	if diff := cmp.Diff([]string{"a", "b"}, got); diff != "" {
		t.Errorf("Context.ExistingApplications (-want +got):\n%s", diff)
	}
}

// TestDecideProjectNotYetCached: an Application whose AppProject the cache
// does not hold yet (both applied at once) is judged with the project the
// API reader finds, not as project-not-found.
func TestDecideProjectNotYetCached(t *testing.T) {
	var project map[string]any
	eval := evaluatorFunc(func(ctx context.Context, in policies.Input) (policies.Decision, error) {
		if stringAt(in.Object, "kind") == "Application" {
			project = in.Project
		}
		return policies.Decision{}, nil
	})
	for name, tc := range map[string]struct {
		apiReader client.Reader
		want      bool
	}{
		"cache only":          {nil, false},
		"cache, then the API": {newReader(t, appProject("team", "team-a")), true},
		"missing in both too": {newReader(t), false},
	} {
		t.Run(name, func(t *testing.T) {
			project = nil
			opts := DefaultOptions()
			opts.Evaluator, opts.Reader, opts.APIReader = eval, newReader(t), tc.apiReader
			h, err := NewHandler(opts)
			if err != nil {
				t.Fatal(err)
			}
			if resp := decide(t, h, request(admissionv1.Create, application("a", "team", "team-a"), nil)); !resp.Allowed {
				t.Fatalf("Decide() denied: %s", message(resp))
			}
			if got := project != nil; got != tc.want {
				t.Errorf("judged with a project: %v, want %v", got, tc.want)
			}
		})
	}
}
