package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/tollgate-dev/tollgate/policies"
)

// TestReservedAnnotation: only tollgate's controller may add, change or
// remove its operation fence on an Application. Anyone else setting it
// would pause another replica's work on the Application; removing it would
// let a second replica start an operation that still runs.
func TestReservedAnnotation(t *testing.T) {
	controller := "system:serviceaccount:tollgate-system:tollgate-controller"
	argocd := "system:serviceaccount:argocd:argocd-application-controller"
	app := application("web", "team", "team-a")
	fenced := func(replica string) map[string]any {
		return with(app, replica, "metadata", "annotations", policies.AnnotationOperationReplica)
	}
	edited := func(obj map[string]any) map[string]any {
		return with(obj, "v2", "spec", "source", "targetRevision")
	}
	by := func(user string, r admission.Request) admission.Request {
		r.UserInfo.Username = user
		return r
	}
	for _, tt := range []struct {
		name string
		cfg  func(*Config)
		req  admission.Request
		want summary
	}{
		{"user creates a fenced Application", nil, request(admissionv1.Create, fenced("tollgate-controller-0"), nil), denied("[reserved-annotation]")},
		{"user sets the fence", nil, request(admissionv1.Update, fenced("tollgate-controller-0"), app), denied("[reserved-annotation]")},
		{"user moves the fence", nil, request(admissionv1.Update, fenced("tollgate-controller-1"), fenced("tollgate-controller-0")), denied("[reserved-annotation]")},
		{"user removes the fence", nil, request(admissionv1.Update, app, fenced("tollgate-controller-0")), denied("[reserved-annotation]")},
		{"user edits a fenced Application", nil, request(admissionv1.Update, edited(fenced("tollgate-controller-0")), fenced("tollgate-controller-0")), allowed},
		{"user labels a fenced Application", nil, request(admissionv1.Update, with(fenced("r0"), "x", "metadata", "labels", "team"), fenced("r0")), allowed},
		{"the Argo CD controller sets the fence", nil, by(argocd, request(admissionv1.Update, fenced("tollgate-controller-0"), app)), denied("[reserved-annotation]")},
		{"the controller sets the fence", nil, by(controller, request(admissionv1.Update, fenced("tollgate-controller-0"), app)), allowed},
		{"the controller removes the fence", nil, by(controller, request(admissionv1.Update, app, fenced("tollgate-controller-0"))), allowed},
		{"the object's exemption annotation exempts nothing", nil,
			request(admissionv1.Update, with(fenced("r0"), "reserved-annotation", "metadata", "annotations", policies.ExemptAnnotation), app),
			denied("[exemption-not-allowed]", "[reserved-annotation]")},
		{"controllerUsers [] trusts nobody", func(c *Config) { c.ControllerUsers = []string{} },
			by(controller, request(admissionv1.Update, fenced("tollgate-controller-0"), app)), denied("[reserved-annotation]")},
		{"the rule can be switched off by the operator", func(c *Config) {
			c.Rules = map[string]policies.Severity{"reserved-annotation": policies.SeverityOff}
		}, request(admissionv1.Update, fenced("tollgate-controller-0"), app), allowed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			h := newHandler(t, cfg, appProject("team", "team-a"))
			resp := decide(t, h, tt.req)
			if diff := cmp.Diff(tt.want, summarize(resp)); diff != "" {
				t.Errorf("Decide() (-want +got):\n%s\nmessage: %s", diff, message(resp))
			}
			checkLines(t, resp)
		})
	}
}
