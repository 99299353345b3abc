package webhook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// TestDecideKinds checks that the handler judges only what a rule can
// judge, whatever the webhook configuration sends it.
func TestDecideKinds(t *testing.T) {
	web := application("web", "team", "team-a")
	team := appProject("team", "team-a")
	tracked := func(obj map[string]any, id string) map[string]any {
		return with(obj, map[string]any{TrackingIDAnnotation: id}, "metadata", "annotations")
	}
	object := func(apiVersion, kind string, md map[string]any) map[string]any {
		return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md}
	}
	configMap := with(object("v1", "ConfigMap", meta("team-c", "settings")), map[string]any{"mode": "fast"}, "data")
	sub := func(r admission.Request, subResource string) admission.Request {
		r.SubResource = subResource
		return r
	}
	const allowedJSON = `{"uid":"req-1","allowed":true,"status":{"metadata":{},"code":200}}`

	tests := []struct {
		name     string
		req      admission.Request
		want     string // the AdmissionResponse as JSON
		decision string
	}{
		{
			name:     "lease skipped even when tracked",
			req:      request(admissionv1.Create, tracked(object("coordination.k8s.io/v1", "Lease", meta("team-c", "lock")), "web:coordination.k8s.io/Lease:team-c/lock"), nil),
			want:     allowedJSON,
			decision: DecisionSkipped,
		},
		{
			name:     "core event skipped",
			req:      request(admissionv1.Create, object("v1", "Event", meta("team-c", "api.17f0")), nil),
			want:     allowedJSON,
			decision: DecisionSkipped,
		},
		{
			name:     "events.k8s.io event skipped even when tracked",
			req:      request(admissionv1.Update, tracked(object("events.k8s.io/v1", "Event", meta("team-c", "api.17f0")), "web:events.k8s.io/Event:team-c/api.17f0"), object("events.k8s.io/v1", "Event", meta("team-c", "api.17f0"))),
			want:     allowedJSON,
			decision: DecisionSkipped,
		},
		{
			name:     "token review skipped",
			req:      request(admissionv1.Create, object("authentication.k8s.io/v1", "TokenReview", map[string]any{}), nil),
			want:     allowedJSON,
			decision: DecisionSkipped,
		},
		{
			name:     "subject access review skipped",
			req:      request(admissionv1.Create, object("authorization.k8s.io/v1", "SubjectAccessReview", map[string]any{}), nil),
			want:     allowedJSON,
			decision: DecisionSkipped,
		},
		{
			name:     "untracked config map skipped",
			req:      request(admissionv1.Create, configMap, nil),
			want:     allowedJSON,
			decision: DecisionSkipped,
		},
		{
			name:     "config map tracked by a missing application skipped",
			req:      request(admissionv1.Create, tracked(configMap, "gone:/ConfigMap:team-c/settings"), nil),
			want:     allowedJSON,
			decision: DecisionSkipped,
		},
		{
			name:     "config map tracked outside its project denied",
			req:      request(admissionv1.Create, tracked(configMap, "web:/ConfigMap:team-c/settings"), nil),
			want:     `{"uid":"req-1","allowed":false,"status":{"metadata":{},"message":"[project-destination-denied] ConfigMap \"settings\" of Application \"web\" has destination (server \"https://kubernetes.default.svc\", namespace \"team-c\"), which AppProject \"team\" does not permit; deploy it into a namespace the project's spec.destinations list or add this one there","reason":"Forbidden","code":403}}`,
			decision: DecisionDenied,
		},
		{
			name:     "config map labelled for its application outside its project denied",
			req:      request(admissionv1.Create, with(configMap, map[string]any{InstanceLabel: "web"}, "metadata", "labels"), nil),
			want:     `{"uid":"req-1","allowed":false,"status":{"metadata":{},"message":"[project-destination-denied] ConfigMap \"settings\" of Application \"web\" has destination (server \"https://kubernetes.default.svc\", namespace \"team-c\"), which AppProject \"team\" does not permit; deploy it into a namespace the project's spec.destinations list or add this one there","reason":"Forbidden","code":403}}`,
			decision: DecisionDenied,
		},
		{
			name:     "untracked pod judged",
			req:      request(admissionv1.Create, pod("team-c", "api", "nginx"), nil),
			want:     `{"uid":"req-1","allowed":false,"status":{"metadata":{},"message":"[no-latest-tag] container \"app\" uses image \"nginx\" without a tag, which means the mutable tag \"latest\"; pin a version tag or a digest (@sha256:...)","reason":"Forbidden","code":403}}`,
			decision: DecisionDenied,
		},
		{
			name:     "pods/status skipped",
			req:      sub(request(admissionv1.Update, pod("team-c", "api", "nginx"), pod("team-c", "api", "nginx:1.27.3")), "status"),
			want:     allowedJSON,
			decision: DecisionSkipped,
		},
		{
			name:     "pods/binding skipped",
			req:      sub(request(admissionv1.Create, object("v1", "Binding", meta("team-c", "api")), nil), "binding"),
			want:     allowedJSON,
			decision: DecisionSkipped,
		},
		{
			name:     "deployments/scale skipped",
			req:      sub(request(admissionv1.Update, deployment("team-c", "api", "nginx"), deployment("team-c", "api", "nginx:1.27.3")), "scale"),
			want:     allowedJSON,
			decision: DecisionSkipped,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(t, DefaultConfig(), web, team)
			resp := decide(t, h, tt.req)
			resp.UID = tt.req.UID // as admission.Webhook sets it
			got, err := json.Marshal(resp.AdmissionResponse)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Decide() =\n%s\nwant\n%s", got, tt.want)
			}
			kind, op := tt.req.Kind.Kind, string(tt.req.Operation)
			if n := counterValue(t, h.metrics.requests.WithLabelValues(kind, op, tt.decision)); n != 1 {
				t.Errorf("requests{kind=%s,operation=%s,decision=%s} = %v, want 1", kind, op, tt.decision, n)
			}
		})
	}
}

// The kinds the built-in rules name are judgedKinds, the Argo CD kinds the
// handler routes apart, or kinds a rule judges only with the Application
// that tracks them.
var (
	argoKinds            = []string{"Application", "AppProject"}
	applicationOnlyKinds = []string{
		"ApplicationSet", // lib.object_is_argocd_kind, about tracked objects
		"Namespace",      // protected-namespace (d), about tracked Namespaces
	}
)

// libraryKindGuard is a rule guard on input.object.kind, an equality or a
// set (perhaps spread over lines).
var libraryKindGuard = regexp.MustCompile(`input\.object\.kind\s*(?:==\s*"([^"]+)"|in\s*\{([^}]*)\})`)

// TestJudgedKindsMatchLibrary keeps judgedKinds (and with it
// config/webhook's resources.tollgate.dev) in step with the kinds the
// built-in rules name: a rule for a new kind fails here until the kind is
// added to judgedKinds and the webhook configuration, or, when the rule
// judges it only with its Application, to applicationOnlyKinds.
func TestJudgedKindsMatchLibrary(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "policies", "library", "*.rego"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no built-in rules found: %v", err)
	}
	named := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.rego") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Comments name kinds as examples ("K").
		code := regexp.MustCompile(`(?m)#.*$`).ReplaceAllString(string(data), "")
		for _, m := range libraryKindGuard.FindAllStringSubmatch(code, -1) {
			if m[1] != "" {
				named[m[1]] = true
			}
			for _, k := range regexp.MustCompile(`"([^"]+)"`).FindAllStringSubmatch(m[2], -1) {
				named[k[1]] = true
			}
		}
	}
	known := map[string]bool{}
	var judged []string
	for gk := range judgedKinds {
		known[gk.Kind] = true
		if !slices.Contains(judged, gk.Kind) {
			judged = append(judged, gk.Kind)
		}
	}
	for _, k := range slices.Concat(argoKinds, applicationOnlyKinds) {
		known[k] = true
	}
	for k := range named {
		if !known[k] {
			t.Errorf("the built-in rules name kind %s, which judgedKinds does not list", k)
		}
	}
	var stale []string
	for _, k := range judged {
		if !named[k] {
			stale = append(stale, k)
		}
	}
	if diff := cmp.Diff([]string(nil), stale); diff != "" {
		t.Errorf("judgedKinds lists kinds no built-in rule names (-want +got):\n%s", diff)
	}
}

// TestNeverJudged pins the kinds skipped before anything else.
func TestNeverJudged(t *testing.T) {
	tests := []struct {
		gvk  metav1.GroupVersionKind
		want bool
	}{
		{metav1.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}, true},
		{metav1.GroupVersionKind{Version: "v1", Kind: "Event"}, true},
		{metav1.GroupVersionKind{Group: "events.k8s.io", Version: "v1", Kind: "Event"}, true},
		{metav1.GroupVersionKind{Group: "authentication.k8s.io", Version: "v1", Kind: "TokenReview"}, true},
		{metav1.GroupVersionKind{Group: "authentication.k8s.io", Version: "v1", Kind: "SelfSubjectReview"}, true},
		{metav1.GroupVersionKind{Group: "authorization.k8s.io", Version: "v1", Kind: "SubjectAccessReview"}, true},
		{metav1.GroupVersionKind{Group: "authorization.k8s.io", Version: "v1", Kind: "LocalSubjectAccessReview"}, true},
		{metav1.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Event"}, false},
		{metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, false},
		{metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.gvk.Group+"/"+tt.gvk.Kind, func(t *testing.T) {
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Kind: tt.gvk}}
			if got := neverJudged(req); got != tt.want {
				t.Errorf("neverJudged() = %v, want %v", got, tt.want)
			}
		})
	}
}
