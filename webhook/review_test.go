package webhook

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReview: a stored object is judged as its admission would be, with
// what a stored object cannot tell left out: no user exemptions, tracking
// claimed, derived objects judged through their owner.
func TestReview(t *testing.T) {
	proj := with(appProject("team", "shop"), map[string]any{"tollgate.dev/exempt": "project-destination-denied"}, "metadata", "annotations")
	app := application("web", "team", "shop")
	h := newHandler(t, DefaultConfig(), proj, app)
	tracked := func(obj map[string]any, ns string) map[string]any {
		return with(obj, map[string]any{TrackingIDAnnotation: "web:apps/Deployment:" + ns + "/web"}, "metadata", "annotations")
	}
	owned := func(obj map[string]any, apiVersion, kind string) map[string]any {
		return with(obj, []any{map[string]any{"apiVersion": apiVersion, "kind": kind, "name": "owner", "uid": "u1", "controller": true}}, "metadata", "ownerReferences")
	}
	tests := []struct {
		name          string
		obj           map[string]any
		clusterScoped bool
		want          []string
		skipped       string
	}{
		{name: "latest tag", obj: deployment("shop", "web", "nginx:latest"), want: []string{"no-latest-tag"}},
		{name: "pinned", obj: deployment("shop", "web", "nginx:1.27.3")},
		{name: "plaintext secret", obj: secret("shop", "db"), want: []string{"no-plaintext-secret"}},
		{name: "exempt namespace", obj: deployment("kube-system", "web", "nginx:latest"), skipped: "exempt namespace"},
		{name: "webhook's own namespace", obj: secret("tollgate-system", "tls"), skipped: "exempt namespace"},
		{name: "Pod of a ReplicaSet", obj: owned(pod("shop", "web-1", "nginx:latest"), "apps/v1", "ReplicaSet"), skipped: "derived from ReplicaSet/owner, which is judged itself"},
		{name: "Secret of a SealedSecret", obj: owned(secret("shop", "db"), "bitnami.com/v1alpha1", "SealedSecret"), skipped: "derived from SealedSecret/owner, which is judged itself"},
		{name: "Pod a ConfigMap claims to own is judged", obj: owned(pod("shop", "web-1", "nginx:latest"), "v1", "ConfigMap"), want: []string{"no-latest-tag"}},
		{name: "untracked ConfigMap", obj: configMap("shop", "settings"), skipped: "ConfigMap is judged only when an Application tracks it"},
		{name: "Lease", obj: map[string]any{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta("shop", "l")}, skipped: "Lease is never judged"},
		// The project's exemption is not lent to an object by its own
		// tracking annotation: whoever wrote it is unknown.
		{name: "tracked outside the project", obj: tracked(deployment("elsewhere", "web", "nginx:1.27.3"), "elsewhere"), want: []string{"project-destination-denied"}},
		{name: "tracked inside the project", obj: tracked(deployment("shop", "web", "nginx:1.27.3"), "shop")},
		// An Application is judged with the project it names, whose
		// exemption it gets, as at admission.
		{name: "Application outside its exempting project", obj: application("web", "team", "elsewhere")},
		{name: "Application of a missing project", obj: application("web", "gone", "shop"), want: []string{"project-not-found"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rv, err := h.Review(t.Context(), tc.obj, tc.clusterScoped)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range rv.Decision.Violations {
				got = append(got, v.Rule)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			if rv.Skipped != tc.skipped {
				t.Errorf("skipped %q, want %q", rv.Skipped, tc.skipped)
			}
		})
	}
}

func configMap(ns, name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(ns, name), "data": map[string]any{"k": "v"}}
}
