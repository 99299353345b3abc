package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestApplicationKey(t *testing.T) {
	h := newHandler(t, DefaultConfig())
	tests := []struct {
		in      string
		want    types.NamespacedName
		wantErr bool
	}{
		{in: "web", want: types.NamespacedName{Namespace: "argocd", Name: "web"}},
		{in: "team-b_web", want: types.NamespacedName{Namespace: "team-b", Name: "web"}},
		{in: "Team_web", wantErr: true},
		{in: "_web", wantErr: true},
		{in: "team_", wantErr: true},
		{in: "a_b_c", wantErr: true},
		{in: "a/b", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := h.applicationKey(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("applicationKey(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("applicationKey(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestHandleTrackedObjects(t *testing.T) {
	web := with(application("web", "team", "team-a"), "2026-01-01T00:00:00Z", "metadata", "creationTimestamp")
	other := with(application("other", "team", "team-a"), "team-b", "metadata", "namespace")
	team := appProject("team", "team-a")
	tracked := func(obj map[string]any, id string) map[string]any {
		return with(obj, map[string]any{TrackingIDAnnotation: id}, "metadata", "annotations")
	}
	labelled := func(obj map[string]any, app string) map[string]any {
		return with(obj, map[string]any{InstanceLabel: app}, "metadata", "labels")
	}
	clusterRole := map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1",
		"kind":       "ClusterRole",
		"metadata":   meta("", "system:web-reader"),
		"rules":      []any{},
	}

	tests := []struct {
		name   string
		method TrackingMethod
		obj    map[string]any
		want   summary
	}{
		{
			name: "annotation: namespace outside the project denied",
			obj:  tracked(deployment("team-c", "api", "nginx:1.27.3"), "web:apps/Deployment:team-c/api"),
			want: denied("[project-destination-denied]"),
		},
		{
			name: "annotation: namespace inside the project allowed",
			obj:  tracked(deployment("team-a", "api", "nginx:1.27.3"), "web:apps/Deployment:team-a/api"),
			want: allowed,
		},
		{
			name: "annotation: application outside argocd found by namespace_name",
			obj:  tracked(deployment("team-c", "api", "nginx:1.27.3"), "team-b_other:apps/Deployment:team-c/api"),
			want: denied("[project-destination-denied]"),
		},
		{
			name: "annotation copied to another object ignored",
			obj:  tracked(deployment("team-c", "api-copy", "nginx:1.27.3"), "web:apps/Deployment:team-c/api"),
			want: allowed,
		},
		{
			name: "annotation of a missing application ignored",
			obj:  tracked(deployment("team-c", "api", "nginx:1.27.3"), "gone:apps/Deployment:team-c/api"),
			want: allowed,
		},
		{
			name: "annotation: cluster-scoped resource the project does not whitelist denied",
			obj:  tracked(clusterRole, "web:rbac.authorization.k8s.io/ClusterRole:/system:web-reader"),
			want: denied("[project-resource-denied]"),
		},
		{
			name: "annotation: object landing in argocd denied",
			obj:  tracked(deployment("argocd", "api", "nginx:1.27.3"), "web:apps/Deployment:argocd/api"),
			want: summary{Code: 403, Reason: metav1.StatusReasonForbidden,
				Denied: []string{"[no-argocd-destination]", "[project-destination-denied]"}},
		},
		{
			name: "label: namespace outside the project denied",
			obj:  labelled(deployment("team-c", "api", "nginx:1.27.3"), "web"),
			want: denied("[project-destination-denied]"),
		},
		{
			name:   "label ignored with annotation tracking",
			method: TrackingAnnotation,
			obj:    labelled(deployment("team-c", "api", "nginx:1.27.3"), "web"),
			want:   allowed,
		},
		{
			name:   "annotation ignored with label tracking",
			method: TrackingLabel,
			obj:    tracked(deployment("team-c", "api", "nginx:1.27.3"), "web:apps/Deployment:team-c/api"),
			want:   allowed,
		},
		{
			name: "malformed instance label ignored",
			obj:  labelled(deployment("team-c", "api", "nginx:1.27.3"), "a_b_c"),
			want: allowed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tt.method != "" {
				cfg.TrackingMethod = tt.method
			}
			h := newHandler(t, cfg, web, other, team)
			req := request(admissionv1.Create, tt.obj, nil)
			resp := h.Handle(t.Context(), req)
			if diff := cmp.Diff(tt.want, summarize(resp)); diff != "" {
				t.Errorf("Handle() (-want +got):\n%s\nmessage: %s", diff, message(resp))
			}
		})
	}
}
