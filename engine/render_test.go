package engine

import (
	"testing"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/render"
	"github.com/tollgate-dev/tollgate/engine/source"
)

func TestRenderKey(t *testing.T) {
	chart := fetched{source: v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/charts.git", Path: "web"}, checkout: source.Checkout{Revision: "aaa", Dir: "/c/1"}}
	values := fetched{source: v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/values", Ref: "values"}, checkout: source.Checkout{Revision: "bbb", Dir: "/c/2"}}
	opts := render.Options{Helm: &render.HelmOptions{ValueFiles: []string{"$values/prod.yaml"}}, Refs: map[string]string{"values": "/c/2"}}
	key := func(f fetched, o render.Options, srcs ...fetched) string {
		t.Helper()
		k, err := renderKey(f, o, srcs)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := key(chart, opts, chart, values)

	moved := values
	moved.checkout.Dir = "/elsewhere"
	movedOpts := opts
	movedOpts.Refs = map[string]string{"values": "/elsewhere"}
	if got := key(chart, movedOpts, chart, moved); got != base {
		t.Error("key changed with the ref checkout's directory; want it to depend on its revision only")
	}
	newer := values
	newer.checkout.Revision = "ccc"
	if got := key(chart, opts, chart, newer); got == base {
		t.Error("key unchanged when the ref source moved to another commit")
	}
	other := chart
	other.checkout.Revision = "ddd"
	if got := key(other, opts, other, values); got == base {
		t.Error("key unchanged when the chart moved to another commit")
	}
}
