package apply_test

import (
	"fmt"
	"testing"

	"github.com/tollgate-dev/tollgate/engine/apply"
)

func TestLiveBatchesReads(t *testing.T) {
	ns := env.Namespace(t)
	var specs []string
	for i := range 6 {
		specs = append(specs, fmt.Sprintf("cm-%d", i))
	}
	objs := configMaps(t, ns, specs...)
	if _, err := applier.Run(t.Context(), build(t, "shop", objs), apply.WaveOptions{App: "shop"}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	refs := make([]apply.Ref, 0, len(objs)+1)
	for _, o := range objs {
		refs = append(refs, apply.RefOf(o))
	}
	refs = append(refs, apply.Ref{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "absent"})

	tests := []struct {
		name     string
		refs     []apply.Ref
		wantGets int64
	}{
		{"many of one kind: one LIST", refs, 1},
		{"few: one GET each", refs[:2], 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls.Reset()
			live, err := applier.Live(t.Context(), tt.refs)
			if err != nil {
				t.Fatalf("Live: %v", err)
			}
			if got := calls.Counts()["GET"]; got != tt.wantGets {
				t.Errorf("GET requests = %d, want %d (all: %v)", got, tt.wantGets, calls.Counts())
			}
			for i, r := range tt.refs {
				if exists := live[i] != nil; exists != (r.Name != "absent") {
					t.Errorf("%s: exists = %v", r, exists)
				}
				if live[i] != nil && live[i].GetName() != r.Name {
					t.Errorf("%s: got %s", r, live[i].GetName())
				}
			}
		})
	}
	if calls.Total() == 0 {
		t.Error("CallCounter counted nothing")
	}
}
