package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
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

func TestDecideTrackedObjects(t *testing.T) {
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
			resp := decide(t, h, req)
			if diff := cmp.Diff(tt.want, summarize(resp)); diff != "" {
				t.Errorf("Decide() (-want +got):\n%s\nmessage: %s", diff, message(resp))
			}
		})
	}
}

// TestDecideTrackedAppProject: an AppProject an Application deploys (app of
// apps) is that Application's resource at admission, as at the engine's
// gate and in the CLI; its own exemption annotation grants nothing to
// whoever writes the root Application's repository, and adding one later by
// a metadata-only UPDATE is judged too.
func TestDecideTrackedAppProject(t *testing.T) {
	// The platform project lets the root Application deploy AppProjects into
	// argocd; the operator or the platform team exempted it from
	// no-argocd-destination and protected-namespace.
	platform := with(appProject("platform", "argocd"),
		map[string]any{"tollgate.dev/exempt": "no-argocd-destination"}, "metadata", "annotations")
	root := application("root", "platform", "argocd")
	const id = "root:argoproj.io/AppProject:argocd/wide"
	wide := with(appProject("wide", "*"),
		map[string]any{TrackingIDAnnotation: id, "tollgate.dev/exempt": "*"}, "metadata", "annotations")
	narrow := with(appProject("narrow", "team-a"),
		map[string]any{TrackingIDAnnotation: "root:argoproj.io/AppProject:argocd/narrow"}, "metadata", "annotations")
	narrowExempt := with(narrow, map[string]any{
		TrackingIDAnnotation: "root:argoproj.io/AppProject:argocd/narrow", "tollgate.dev/exempt": "project-resource-denied",
	}, "metadata", "annotations")

	// Argo CD's application controller applies what the root renders.
	bySync := func(r admission.Request) admission.Request {
		r.UserInfo.Username = "system:serviceaccount:argocd:argocd-application-controller"
		return r
	}
	tests := []struct {
		name string
		req  admission.Request
		want summary
	}{
		{
			name: "an untracked wide project is its own authority",
			req: request(admissionv1.Create, with(appProject("wide", "*"),
				map[string]any{"tollgate.dev/exempt": "*"}, "metadata", "annotations"), nil),
			want: allowed,
		},
		{
			name: "a tracked wide project is judged as its Application's resource",
			req:  bySync(request(admissionv1.Create, wide, nil)),
			want: denied("[protected-namespace]"),
		},
		{
			name: "a tracking claim by another user lends no project exemption",
			req:  request(admissionv1.Create, wide, nil),
			want: denied("[no-argocd-destination]", "[protected-namespace]"),
		},
		{
			name: "a tracked scoped project is allowed",
			req:  bySync(request(admissionv1.Create, narrow, nil)),
			want: allowed,
		},
		{
			name: "an exemption added by a metadata-only update is judged",
			req:  bySync(request(admissionv1.Update, narrowExempt, narrow)),
			want: denied("[exemption-not-allowed]"),
		},
		{
			name: "another metadata-only update is skipped",
			req: bySync(request(admissionv1.Update,
				with(narrowExempt, map[string]any{"team": "web"}, "metadata", "labels"), narrowExempt)),
			want: allowed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(t, DefaultConfig(), platform, root)
			resp := decide(t, h, tt.req)
			if diff := cmp.Diff(tt.want, summarize(resp)); diff != "" {
				t.Errorf("Decide() (-want +got):\n%s\nmessage: %s", diff, message(resp))
			}
		})
	}
}

// TestDecideTrackingClaims: tracking metadata is written by whoever writes
// the object. Written by a sync engine, it lends the object its project's
// exemptions; written by anyone else, it only subjects the object to the
// project's rules.
func TestDecideTrackingClaims(t *testing.T) {
	exempt := with(appProject("team", "team-a"),
		map[string]any{"tollgate.dev/exempt": "project-destination-denied"}, "metadata", "annotations")
	web := application("web", "team", "team-a")
	outside := with(deployment("team-c", "api", "nginx:1.27.3"),
		map[string]any{TrackingIDAnnotation: "web:apps/Deployment:team-c/api"}, "metadata", "annotations")
	as := func(user string) admission.Request {
		r := request(admissionv1.Create, outside, nil)
		r.UserInfo.Username = user
		return r
	}
	tests := []struct {
		name string
		cfg  func(*Config)
		req  admission.Request
		want summary
	}{
		{name: "tollgate's controller", req: as("system:serviceaccount:tollgate-system:tollgate-controller"), want: allowed},
		{name: "Argo CD's application controller", req: as("system:serviceaccount:argocd:argocd-application-controller"), want: allowed},
		{name: "a person", req: as("jane"), want: denied("[project-destination-denied]")},
		{
			name: "a configured sync user",
			cfg:  func(c *Config) { c.SyncUsers = []string{"system:serviceaccount:gitops:syncer"} },
			req:  as("system:serviceaccount:gitops:syncer"),
			want: allowed,
		},
		{
			name: "the defaults are replaced",
			cfg:  func(c *Config) { c.SyncUsers = []string{} },
			req:  as("system:serviceaccount:tollgate-system:tollgate-controller"),
			want: denied("[project-destination-denied]"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			h := newHandler(t, cfg, exempt, web)
			resp := decide(t, h, tt.req)
			if diff := cmp.Diff(tt.want, summarize(resp)); diff != "" {
				t.Errorf("Decide() (-want +got):\n%s\nmessage: %s", diff, message(resp))
			}
		})
	}
}
