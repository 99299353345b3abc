package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestDeleteApps: argocd app delete's finalizers, selector and prompt.
func TestDeleteApps(t *testing.T) {
	no := false
	newApp := func(name string, fins ...string) *v1alpha1.Application {
		return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd", Finalizers: fins,
			Labels: map[string]string{"team": "a"}}}
	}
	read := func(c client.Client, name string) (*v1alpha1.Application, bool) {
		var a v1alpha1.Application
		err := c.Get(context.Background(), types.NamespacedName{Namespace: "argocd", Name: name}, &a)
		if apierrors.IsNotFound(err) {
			return nil, false
		}
		if err != nil {
			t.Fatal(err)
		}
		return &a, true
	}
	base := appDeleteOptions{appTarget: appTarget{namespace: "argocd"}}
	for _, tc := range []struct {
		name     string
		app      *v1alpha1.Application
		edit     func(*appDeleteOptions)
		in       string
		wantFins []string // nil: gone
		wantOut  string
	}{
		{name: "cascade by default: the bare resources finalizer", app: newApp("web"),
			wantFins: []string{v1alpha1.ResourcesFinalizerName}, wantOut: "application 'web' deleted\n"},
		{name: "background policy", app: newApp("web"), edit: func(o *appDeleteOptions) { o.policy = "background" },
			wantFins: []string{v1alpha1.BackgroundPropagationPolicyFinalizer}},
		{name: "no cascade removes the cascade finalizers", app: newApp("web", v1alpha1.ResourcesFinalizerName, v1alpha1.ForegroundPropagationPolicyFinalizer),
			edit: func(o *appDeleteOptions) { o.cascade = &no }},
		{name: "other finalizers stay", app: newApp("web", "example.com/keep"), edit: func(o *appDeleteOptions) { o.cascade = &no },
			wantFins: []string{"example.com/keep"}},
		{name: "prompt answered n", app: newApp("web"), edit: func(o *appDeleteOptions) { o.prompt = true }, in: "n\n",
			wantFins: []string{}, wantOut: "Are you sure you want to delete 'web' and all its resources? [y/n] The command to delete 'web' was cancelled.\n"},
		{name: "prompt answered y", app: newApp("web"), edit: func(o *appDeleteOptions) { o.prompt = true }, in: "y\n",
			wantFins: []string{v1alpha1.ResourcesFinalizerName}},
		{name: "selector", app: newApp("web"), edit: func(o *appDeleteOptions) { o.names, o.selector = nil, "team=a" },
			wantFins: []string{v1alpha1.ResourcesFinalizerName}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeAppClient(t, tc.app)
			o := base
			o.names = []string{"web"}
			if tc.edit != nil {
				tc.edit(&o)
			}
			var out bytes.Buffer
			if err := deleteApps(t.Context(), c, o, strings.NewReader(tc.in), &out); err != nil {
				t.Fatal(err)
			}
			a, ok := read(c, "web")
			switch {
			case tc.wantFins == nil && ok:
				t.Errorf("still there with finalizers %v", a.Finalizers)
			case tc.wantFins != nil && !ok:
				t.Errorf("gone, want finalizers %v", tc.wantFins)
			case ok && strings.Join(a.Finalizers, ",") != strings.Join(tc.wantFins, ","):
				t.Errorf("finalizers %v, want %v", a.Finalizers, tc.wantFins)
			case ok && len(tc.wantFins) > 0 && a.DeletionTimestamp == nil:
				t.Error("not deleted")
			case ok && len(tc.wantFins) == 0 && a.DeletionTimestamp != nil:
				t.Error("deleted although the prompt said n")
			}
			if tc.wantOut != "" && out.String() != tc.wantOut {
				t.Errorf("output %q, want %q", out.String(), tc.wantOut)
			}
		})
	}
	o := base
	o.names, o.cascade, o.policy = []string{"web"}, &no, "background"
	if err := deleteApps(t.Context(), fakeAppClient(t, newApp("web")), o, nil, &bytes.Buffer{}); exitCode(err) != exitUsage ||
		!strings.Contains(err.Error(), "cannot set propagation policy when cascading is disabled") {
		t.Errorf("--cascade=false with a policy: %v", err)
	}
	o.names, o.cascade, o.policy = []string{"missing"}, nil, ""
	if err := deleteApps(t.Context(), fakeAppClient(t), o, nil, &bytes.Buffer{}); exitCode(err) != exitUsage {
		t.Errorf("a missing Application: %v (exit %d)", err, exitCode(err))
	}
}
