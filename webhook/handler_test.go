package webhook

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/tollgate-dev/tollgate/policies"
)

var (
	allowed = summary{Allowed: true, Code: 200}
	denied  = func(rules ...string) summary {
		return summary{Code: 403, Reason: metav1.StatusReasonForbidden, Denied: rules}
	}
	warned = func(warnings ...string) summary {
		return summary{Allowed: true, Code: 200, Warnings: warnings}
	}
)

func TestDecide(t *testing.T) {
	pinned := deployment("web", "api", "nginx:1.27.3")
	latest := deployment("web", "api", "nginx:latest")
	team := appProject("team", "team-a", "team-b")

	tests := []struct {
		name string
		cfg  func(*Config)
		objs []map[string]any // in the cache
		req  admission.Request
		want summary
	}{
		{
			name: "deployment with latest tag denied",
			req:  request(admissionv1.Create, latest, nil),
			want: denied("[no-latest-tag]"),
		},
		{
			name: "deployment with pinned tag allowed",
			req:  request(admissionv1.Create, pinned, nil),
			want: allowed,
		},
		{
			name: "dry run judged like a real request",
			req: func() admission.Request {
				r := request(admissionv1.Create, latest, nil)
				r.DryRun = ptr.To(true)
				return r
			}(),
			want: denied("[no-latest-tag]"),
		},
		{
			name: "update to latest tag denied",
			req:  request(admissionv1.Update, latest, pinned),
			want: denied("[no-latest-tag]"),
		},
		{
			name: "update of metadata only allowed",
			req:  request(admissionv1.Update, with(latest, map[string]any{"team": "a"}, "metadata", "labels"), latest),
			want: allowed,
		},
		{
			name: "update of status only allowed",
			req:  request(admissionv1.Update, with(latest, map[string]any{"replicas": 2}, "status"), latest),
			want: allowed,
		},
		{
			name: "update of an object being deleted allowed",
			req: request(admissionv1.Update,
				with(with(latest, int64(3), "spec", "replicas"), "2026-01-01T00:00:00Z", "metadata", "deletionTimestamp"), latest),
			want: allowed,
		},
		{
			name: "delete allowed without judging",
			req:  request(admissionv1.Delete, nil, latest),
			want: allowed,
		},
		{
			name: "status subresource allowed without judging",
			req: func() admission.Request {
				r := request(admissionv1.Update, with(latest, int64(5), "spec", "replicas"), pinned)
				r.SubResource = "status"
				return r
			}(),
			want: allowed,
		},
		{
			name: "connect allowed",
			req: func() admission.Request {
				r := request(admissionv1.Connect, deployment("web", "api", "x"), nil)
				r.Kind = metav1.GroupVersionKind{Version: "v1", Kind: "PodExecOptions"}
				return r
			}(),
			want: allowed,
		},
		{
			name: "secret with data denied",
			req:  request(admissionv1.Create, secret("web", "db"), nil),
			want: denied("[no-plaintext-secret]"),
		},
		{
			name: "sealed secret allowed",
			req:  request(admissionv1.Create, sealedSecret("web", "db"), nil),
			want: allowed,
		},
		{
			// Anyone can write an ownerReference: it exempts nothing. The
			// sealed-secrets controller is exempt by user instead.
			name: "secret claiming a controller owner still denied",
			req: request(admissionv1.Create, with(secret("web", "db"), []any{map[string]any{
				"apiVersion": "bitnami.com/v1alpha1", "kind": "SealedSecret", "name": "db", "uid": "u1", "controller": true,
			}}, "metadata", "ownerReferences"), nil),
			want: denied("[no-plaintext-secret]"),
		},
		{
			name: "secret written by the sealed-secrets controller allowed once configured",
			cfg: func(c *Config) {
				c.ExemptUsers = append(c.ExemptUsers, "system:serviceaccount:kube-system:sealed-secrets-controller")
			},
			req: func() admission.Request {
				r := request(admissionv1.Create, secret("web", "db"), nil)
				r.UserInfo = authenticationv1.UserInfo{Username: "system:serviceaccount:kube-system:sealed-secrets-controller"}
				return r
			}(),
			want: allowed,
		},
		{
			// Whoever may create the namespace external-secrets and a
			// ServiceAccount in it gets this name: it is not exempt unless
			// the configuration says so.
			name: "secret written as external-secrets' service account denied by default",
			req: func() admission.Request {
				r := request(admissionv1.Create, secret("web", "db"), nil)
				r.UserInfo = authenticationv1.UserInfo{
					Username: "system:serviceaccount:external-secrets:external-secrets",
					Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:external-secrets", "system:authenticated"},
				}
				return r
			}(),
			want: denied("[no-plaintext-secret]"),
		},
		{
			name: "exempt namespace allowed",
			req:  request(admissionv1.Create, deployment("kube-system", "dns", "coredns:latest"), nil),
			want: allowed,
		},
		{
			name: "own namespace always exempt",
			cfg:  func(c *Config) { c.ExemptNamespaces = nil },
			req:  request(admissionv1.Create, secret("tollgate-system", "tollgate-webhook-tls"), nil),
			want: allowed,
		},
		{
			name: "exempt user allowed",
			req: func() admission.Request {
				r := request(admissionv1.Create, secret("web", "token"), nil)
				r.UserInfo = authenticationv1.UserInfo{Username: "system:kube-controller-manager"}
				return r
			}(),
			want: allowed,
		},
		{
			name: "exempt group allowed",
			req: func() admission.Request {
				r := request(admissionv1.Create, latest, nil)
				r.UserInfo = authenticationv1.UserInfo{Username: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}}
				return r
			}(),
			want: allowed,
		},
		{
			name: "configured exemptions replace the defaults",
			cfg:  func(c *Config) { c.ExemptNamespaces = []string{"legacy"} },
			req:  request(admissionv1.Create, deployment("kube-system", "dns", "coredns:latest"), nil),
			want: denied("[no-latest-tag]"),
		},
		{
			name: "audit mode warns instead of denying",
			cfg:  func(c *Config) { c.Mode = ModeAudit },
			req:  request(admissionv1.Create, latest, nil),
			want: warned("[no-latest-tag]"),
		},
		{
			name: "severity override to warn",
			cfg:  func(c *Config) { c.Rules = policies.RuleSeverities{"no-latest-tag": policies.SeverityWarn} },
			req:  request(admissionv1.Create, latest, nil),
			want: warned("[no-latest-tag]"),
		},
		{
			name: "unknown kind without metadata allowed",
			req: request(admissionv1.Create, map[string]any{
				"apiVersion": "example.com/v1", "kind": "Widget", "spec": map[string]any{"size": 3},
			}, nil),
			want: allowed,
		},
		{
			name: "application with a missing project denied",
			req:  request(admissionv1.Create, application("web", "nope", "web"), nil),
			want: denied("[project-not-found]"),
		},
		{
			name: "application in the implicit default project warned",
			cfg:  func(c *Config) { c.ImplicitDefaultProject = true },
			req:  request(admissionv1.Create, application("web", "", "web"), nil),
			want: warned("[default-project]"),
		},
		{
			name: "application in a missing default project denied",
			req:  request(admissionv1.Create, application("web", "", "web"), nil),
			want: summary{Code: 403, Reason: metav1.StatusReasonForbidden,
				Denied: []string{"[project-not-found]"}, Warnings: []string{"[default-project]"}},
		},
		{
			name: "application in its project allowed",
			objs: []map[string]any{team},
			req:  request(admissionv1.Create, application("web", "team", "team-a"), nil),
			want: allowed,
		},
		{
			name: "application outside its project's destinations denied",
			objs: []map[string]any{team},
			req:  request(admissionv1.Create, application("web", "team", "team-c"), nil),
			want: denied("[project-destination-denied]"),
		},
		{
			name: "projects read from the configured Argo CD namespace",
			cfg:  func(c *Config) { c.ArgoCDNamespace = "gitops" },
			objs: []map[string]any{with(team, "gitops", "metadata", "namespace")},
			req:  request(admissionv1.Create, with(application("web", "team", "team-a"), "gitops", "metadata", "namespace"), nil),
			want: allowed,
		},
		{
			name: "projects outside the Argo CD namespace ignored",
			objs: []map[string]any{with(team, "gitops", "metadata", "namespace")},
			req:  request(admissionv1.Create, application("web", "team", "team-a"), nil),
			want: denied("[project-not-found]"),
		},
		{
			name: "application deploying into argocd denied",
			cfg:  func(c *Config) { c.ImplicitDefaultProject = true },
			req:  request(admissionv1.Create, application("web", "", "argocd"), nil),
			want: summary{Code: 403, Reason: metav1.StatusReasonForbidden,
				Denied: []string{"[no-argocd-destination]"}, Warnings: []string{"[default-project]"}},
		},
		{
			name: "application delete allowed",
			req:  request(admissionv1.Delete, nil, application("web", "nope", "web")),
			want: allowed,
		},
		{
			name: "appproject permitting argocd denied on create",
			req:  request(admissionv1.Create, appProject("wide", "*"), nil),
			want: denied("[no-argocd-destination]", "[protected-namespace]"),
		},
		{
			name: "appproject already permitting argocd still denied on update",
			req: request(admissionv1.Update,
				with(appProject("wide", "*"), []any{"https://github.com/other/*"}, "spec", "sourceRepos"),
				appProject("wide", "*")),
			want: denied("[no-argocd-destination]", "[protected-namespace]"),
		},
		{
			name: "appproject outside argocd denied",
			req:  request(admissionv1.Create, with(appProject("team", "team-a"), "team-a", "metadata", "namespace"), nil),
			want: denied("[app-namespace]"),
		},
		{
			name: "scoped appproject allowed",
			req:  request(admissionv1.Create, appProject("team", "team-a"), nil),
			want: allowed,
		},
		{
			name: "appproject delete allowed",
			req:  request(admissionv1.Delete, nil, team),
			want: allowed,
		},
		{
			name: "malformed object is a bad request",
			req: func() admission.Request {
				r := request(admissionv1.Create, latest, nil)
				r.Object.Raw = []byte(`[1, 2]`)
				return r
			}(),
			want: summary{Code: 400, Reason: metav1.StatusReasonBadRequest},
		},
		{
			name: "application the types cannot read is a bad request",
			req:  request(admissionv1.Create, with(application("web", "team", "team-a"), 5, "spec", "project"), nil),
			objs: []map[string]any{team},
			want: summary{Code: 400, Reason: metav1.StatusReasonBadRequest},
		},
		{
			name: "appproject the types cannot read is a bad request",
			req:  request(admissionv1.Create, with(appProject("team", "team-a"), "*", "spec", "destinations"), nil),
			want: summary{Code: 400, Reason: metav1.StatusReasonBadRequest},
		},
		{
			name: "missing object is a bad request",
			req: func() admission.Request {
				r := request(admissionv1.Create, latest, nil)
				r.Object.Raw = nil
				return r
			}(),
			want: summary{Code: 400, Reason: metav1.StatusReasonBadRequest},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			h := newHandler(t, cfg, tt.objs...)
			resp := decide(t, h, tt.req)
			if diff := cmp.Diff(tt.want, summarize(resp)); diff != "" {
				t.Errorf("Decide() (-want +got):\n%s\nmessage: %s\nwarnings: %q", diff, message(resp), resp.Warnings)
			}
			checkLines(t, resp)
		})
	}
}

// TestDecideApplicationAsSent: an Application under review reaches the
// rules as it was sent, fields the Go types do not know and empty values
// included, as both the object and its Application; its AppProject is the
// one the cache holds.
func TestDecideApplicationAsSent(t *testing.T) {
	var got policies.Input
	eval := evaluatorFunc(func(_ context.Context, in policies.Input) (policies.Decision, error) {
		got = in
		return policies.Decision{}, nil
	})
	opts := DefaultOptions()
	opts.Evaluator, opts.Reader = eval, newReader(t, appProject("team", "team-a"))
	h, err := NewHandler(opts)
	if err != nil {
		t.Fatal(err)
	}
	app := with(application("web", "team", "team-a"), "v9", "spec", "futureField")
	app = with(app, "", "spec", "destination", "name")
	if resp := decide(t, h, request(admissionv1.Create, app, nil)); !resp.Allowed {
		t.Fatalf("Decide() denied: %s", message(resp))
	}
	if diff := cmp.Diff(app, got.Object); diff != "" {
		t.Errorf("Input.Object (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(app, got.Application); diff != "" {
		t.Errorf("Input.Application (-want +got):\n%s", diff)
	}
	if name := stringAt(got.Project, "metadata", "name"); name != "team" {
		t.Errorf("Input.Project is %q, want the cached AppProject team", name)
	}
}

// lineFormat is how every denial line and rule warning reads.
var lineFormat = regexp.MustCompile(`^\[[a-z0-9.:/-]+\] \S`)

// checkLines checks the "[rule-id] message" format of denials and warnings.
func checkLines(t *testing.T, resp admission.Response) {
	t.Helper()
	if !resp.Allowed && resp.Result != nil && resp.Result.Code == 403 {
		for _, line := range strings.Split(resp.Result.Message, "\n") {
			if !lineFormat.MatchString(line) {
				t.Errorf("denial line %q does not read [rule-id] message", line)
			}
		}
	}
	for _, w := range resp.Warnings {
		if strings.HasPrefix(w, "[") && !lineFormat.MatchString(w) {
			t.Errorf("warning %q does not read [rule-id] message", w)
		}
	}
}

func message(resp admission.Response) string {
	if resp.Result == nil {
		return ""
	}
	return resp.Result.Message
}

func TestDecideDenialMessage(t *testing.T) {
	obj := deployment("web", "api", "nginx:latest")
	spec := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	spec["initContainers"] = []any{map[string]any{"name": "init", "image": "busybox"}}
	h := newHandler(t, DefaultConfig())
	resp := decide(t, h, request(admissionv1.Create, obj, nil))
	lines := strings.Split(message(resp), "\n")
	if len(lines) != 2 {
		t.Fatalf("denial message has %d lines, want one per violation (2):\n%s", len(lines), message(resp))
	}
	for i, want := range []string{`container "app"`, `init container "init"`} {
		if !strings.HasPrefix(lines[i], "[no-latest-tag] ") || !strings.Contains(lines[i], want) {
			t.Errorf("line %d = %q, want [no-latest-tag] naming %s", i, lines[i], want)
		}
	}
}

// TestDecideFailures: a request that cannot be decided is an error (which
// NewHTTPHandler answers with HTTP 500), logged and counted as errored; in
// audit mode, or when nothing needed deciding, it is a response.
func TestDecideFailures(t *testing.T) {
	boom := errors.New("evaluate policies for Deployment/api: policy evaluation exceeded 2s: context deadline exceeded")
	failing := evaluatorFunc(func(context.Context, policies.Input) (policies.Decision, error) {
		return policies.Decision{}, boom
	})
	panicking := evaluatorFunc(func(context.Context, policies.Input) (policies.Decision, error) {
		panic("bad rule")
	})
	tests := []struct {
		name     string
		mode     Mode
		eval     Evaluator
		reader   bool // failing reader
		req      admission.Request
		want     summary
		wantErr  string
		decision string
	}{
		{
			name:     "evaluation error is an error",
			eval:     failing,
			req:      request(admissionv1.Create, deployment("web", "api", "nginx:1"), nil),
			wantErr:  boom.Error(),
			decision: DecisionErrored,
		},
		{
			name:     "panic is an error",
			eval:     panicking,
			req:      request(admissionv1.Create, deployment("web", "api", "nginx:1"), nil),
			wantErr:  "handle admission request: panic: bad rule",
			decision: DecisionErrored,
		},
		{
			name:     "cache failure is an error",
			reader:   true,
			req:      request(admissionv1.Create, application("web", "team", "team-a"), nil),
			wantErr:  "get AppProject argocd/team from cache: cache not synced",
			decision: DecisionErrored,
		},
		{
			name:     "audit mode allows with a warning",
			mode:     ModeAudit,
			eval:     failing,
			req:      request(admissionv1.Create, deployment("web", "api", "nginx:1"), nil),
			want:     warned("tollgate could not judge this request (audit mode allows it): " + boom.Error()),
			decision: DecisionErrored,
		},
		{
			name:     "project delete never blocked by the cache",
			reader:   true,
			req:      request(admissionv1.Delete, nil, appProject("team", "team-a")),
			want:     warned(`could not check which Applications use AppProject "team": list Applications of AppProject "team" from cache: cache not synced`),
			decision: DecisionWarned,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Config.Mode = tt.mode
			opts.Evaluator = tt.eval
			if opts.Evaluator == nil {
				opts.Evaluator = evaluator(t)
			}
			opts.Reader = newReader(t)
			if tt.reader {
				opts.Reader = failingReader{}
			}
			h, err := NewHandler(opts)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := h.Decide(t.Context(), tt.req)
			switch {
			case tt.wantErr != "":
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("Decide() error = %v, want %q", err, tt.wantErr)
				}
				if diff := cmp.Diff(admission.Response{}, resp); diff != "" {
					t.Errorf("Decide() response with an error (-want +got):\n%s", diff)
				}
			case err != nil:
				t.Errorf("Decide() error = %v, want none", err)
			default:
				if diff := cmp.Diff(tt.want, summarize(resp)); diff != "" {
					t.Errorf("Decide() (-want +got):\n%s\nmessage: %s", diff, message(resp))
				}
			}
			if got := counterValue(t, h.metrics.evaluationErrors); got != 1 {
				t.Errorf("tollgate_policy_evaluation_errors_total = %v, want 1", got)
			}
			kind, op := tt.req.Kind.Kind, string(tt.req.Operation)
			if got := counterValue(t, h.metrics.requests.WithLabelValues(kind, op, tt.decision)); got != 1 {
				t.Errorf("tollgate_admission_requests_total{decision=%s} = %v, want 1", tt.decision, got)
			}
		})
	}
}

func TestDecideMetrics(t *testing.T) {
	h := newHandler(t, DefaultConfig())
	for _, req := range []admission.Request{
		request(admissionv1.Create, deployment("web", "api", "nginx:latest"), nil),
		request(admissionv1.Create, deployment("web", "api", "nginx:1.27.3"), nil),
		request(admissionv1.Create, deployment("kube-system", "api", "nginx:latest"), nil),
		request(admissionv1.Delete, nil, deployment("web", "api", "nginx:latest")),
	} {
		decide(t, h, req)
	}
	for _, tt := range []struct {
		decision string
		want     float64
	}{
		{DecisionDenied, 1}, {DecisionAllowed, 1}, {DecisionExempt, 1}, {DecisionSkipped, 1}, {DecisionWarned, 0},
	} {
		op := "CREATE"
		if tt.decision == DecisionSkipped {
			op = "DELETE"
		}
		if got := counterValue(t, h.metrics.requests.WithLabelValues("Deployment", op, tt.decision)); got != tt.want {
			t.Errorf("requests{decision=%s} = %v, want %v", tt.decision, got, tt.want)
		}
	}
	if got := counterValue(t, h.metrics.duration); got != 4 {
		t.Errorf("duration samples = %v, want 4", got)
	}
	if got := counterValue(t, h.metrics.violations.WithLabelValues("no-latest-tag", "deny", "enforce")); got != 1 {
		t.Errorf("violations{no-latest-tag} = %v, want 1", got)
	}
}

func TestSetEvaluator(t *testing.T) {
	h := newHandler(t, DefaultConfig())
	req := request(admissionv1.Create, deployment("web", "api", "nginx:1.27.3"), nil)
	if resp := decide(t, h, req); !resp.Allowed {
		t.Fatalf("before swap: denied: %s", message(resp))
	}
	h.SetEvaluator(evaluatorFunc(func(context.Context, policies.Input) (policies.Decision, error) {
		return policies.Decision{Violations: []policies.Violation{{Rule: "main", Severity: policies.SeverityDeny, Message: "no"}}}, nil
	}))
	h.SetEvaluator(nil) // ignored
	resp := decide(t, h, req)
	if diff := cmp.Diff(denied("[main]"), summarize(resp)); diff != "" {
		t.Errorf("after swap (-want +got):\n%s", diff)
	}
}

func TestNewHandlerErrors(t *testing.T) {
	tests := []struct {
		name string
		opts func(*Options)
		want string
	}{
		{"no evaluator", func(o *Options) { o.Evaluator = nil }, "create webhook handler: no evaluator"},
		{"no reader", func(o *Options) { o.Reader = nil }, "create webhook handler: no cache reader"},
		{"bad config", func(o *Options) { o.Config.Mode = "strict" }, `create webhook handler: mode: invalid mode "strict" (want enforce or audit)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Evaluator = evaluator(t)
			opts.Reader = newReader(t)
			tt.opts(&opts)
			_, err := NewHandler(opts)
			if err == nil || err.Error() != tt.want {
				t.Errorf("NewHandler() error = %v, want %q", err, tt.want)
			}
		})
	}
}
