package webhook

import (
	"encoding/json"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

func TestDecideEphemeralContainers(t *testing.T) {
	running := pod("web", "api", "nginx:1.27.3")
	const (
		allowedJSON = `{"uid":"req-1","allowed":true,"status":{"metadata":{},"code":200}}`
		deniedJSON  = `{"uid":"req-1","allowed":false,"status":{"metadata":{},"message":"[no-latest-tag] ephemeral container \"debugger\" uses image \"busybox\" without a tag, which means the mutable tag \"latest\"; pin a version tag or a digest (@sha256:...)","reason":"Forbidden","code":403}}`
	)
	tests := []struct {
		name     string
		cfg      func(*Config)
		req      admission.Request
		want     string // the AdmissionResponse as JSON
		decision string
	}{
		{
			name:     "untagged debug image denied",
			req:      debugRequest(running, ephemeral("debugger", "busybox")),
			want:     deniedJSON,
			decision: DecisionDenied,
		},
		{
			name:     "pinned debug image allowed",
			req:      debugRequest(running, ephemeral("debugger", "busybox:1.37.0")),
			want:     allowedJSON,
			decision: DecisionAllowed,
		},
		{
			// Only what the request adds is judged: the Pod's own
			// containers were admitted with it (here, say, by an exempt
			// controller).
			name:     "pinned debug image allowed in a pod running latest",
			req:      debugRequest(pod("web", "api", "nginx:latest"), ephemeral("debugger", "busybox:1.37.0")),
			want:     allowedJSON,
			decision: DecisionAllowed,
		},
		{
			name: "pinned debug image allowed beside an earlier unpinned one",
			req: debugRequest(with(running, []any{ephemeral("old", "busybox")}, "spec", "ephemeralContainers"),
				ephemeral("debugger", "busybox:1.37.0")),
			want:     allowedJSON,
			decision: DecisionAllowed,
		},
		{
			name: "untagged debug image denied beside an earlier pinned one",
			req: debugRequest(with(running, []any{ephemeral("old", "busybox:1.37.0")}, "spec", "ephemeralContainers"),
				ephemeral("debugger", "busybox")),
			want:     deniedJSON,
			decision: DecisionDenied,
		},
		{
			name:     "nothing added skipped",
			req:      debugRequest(with(running, []any{ephemeral("old", "busybox")}, "spec", "ephemeralContainers")),
			want:     allowedJSON,
			decision: DecisionSkipped,
		},
		{
			name: "without the old pod every ephemeral container judged",
			req: func() admission.Request {
				r := debugRequest(running, ephemeral("debugger", "busybox"))
				r.OldObject.Raw = nil
				return r
			}(),
			want:     deniedJSON,
			decision: DecisionDenied,
		},
		{
			name: "exempt user allowed",
			req: func() admission.Request {
				r := debugRequest(running, ephemeral("debugger", "busybox"))
				r.UserInfo = authenticationv1.UserInfo{Username: "system:kube-controller-manager"}
				return r
			}(),
			want:     allowedJSON,
			decision: DecisionExempt,
		},
		{
			name:     "audit mode warns",
			cfg:      func(c *Config) { c.Mode = ModeAudit },
			req:      debugRequest(running, ephemeral("debugger", "busybox")),
			want:     `{"uid":"req-1","allowed":true,"status":{"metadata":{},"code":200},"warnings":["[no-latest-tag] ephemeral container \"debugger\" uses image \"busybox\" without a tag, which means the mutable tag \"latest\"; pin a version tag or a digest (@sha256:...)"]}`,
			decision: DecisionAudited,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			h := newHandler(t, cfg)
			resp := decide(t, h, tt.req)
			resp.UID = tt.req.UID // as admission.Webhook sets it
			got, err := json.Marshal(resp.AdmissionResponse)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Decide() =\n%s\nwant\n%s", got, tt.want)
			}
			if n := counterValue(t, h.metrics.requests.WithLabelValues("Pod", "UPDATE", tt.decision)); n != 1 {
				t.Errorf("requests{kind=Pod,operation=UPDATE,decision=%s} = %v, want 1", tt.decision, n)
			}
		})
	}
}

func TestAddedEphemeralContainers(t *testing.T) {
	podWith := func(list any) map[string]any {
		return map[string]any{"spec": map[string]any{"ephemeralContainers": list}}
	}
	a, b := ephemeral("a", "busybox"), ephemeral("b", "busybox")
	tests := []struct {
		name     string
		pod, old map[string]any
		want     int
	}{
		{"no old pod", podWith([]any{a, b}), nil, 2},
		{"old pod without ephemeral containers", podWith([]any{a}), pod("web", "api", "x"), 1},
		{"one added", podWith([]any{a, b}), podWith([]any{a}), 1},
		{"none added", podWith([]any{a}), podWith([]any{a}), 0},
		{"unnamed entry kept", podWith([]any{a, map[string]any{"image": "x"}}), podWith([]any{a}), 1},
		{"not a list", podWith(map[string]any{"a": a}), nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := addedEphemeralContainers(tt.pod, tt.old); len(got) != tt.want {
				t.Errorf("addedEphemeralContainers() = %v, want %d entries", got, tt.want)
			}
		})
	}
}

func TestEphemeralContainersRequest(t *testing.T) {
	tests := []struct {
		name   string
		change func(*admission.Request)
		want   bool
	}{
		{"pods/ephemeralcontainers", func(*admission.Request) {}, true},
		{"pods/status", func(r *admission.Request) { r.SubResource = "status" }, false},
		{"pods without sub-resource", func(r *admission.Request) { r.SubResource = "" }, false},
		{"other resource", func(r *admission.Request) { r.Resource.Resource = "podtemplates" }, false},
		{"kind of API servers before 1.23", func(r *admission.Request) { r.Kind.Kind = "EphemeralContainers" }, false},
		{"other group", func(r *admission.Request) { r.Resource.Group = "example.com" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := debugRequest(pod("web", "api", "x"), ephemeral("d", "busybox"))
			tt.change(&r)
			if got := ephemeralContainersRequest(r); got != tt.want {
				t.Errorf("ephemeralContainersRequest() = %v, want %v", got, tt.want)
			}
		})
	}
}
