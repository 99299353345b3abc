package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMergeValues(t *testing.T) {
	a := map[string]any{"image": map[string]any{"repository": "r", "tag": "1"}, "replicas": 1.0, "list": []any{1.0}}
	b := map[string]any{"image": map[string]any{"tag": "2"}, "list": []any{2.0}, "extra": true}
	want := map[string]any{"image": map[string]any{"repository": "r", "tag": "2"}, "replicas": 1.0, "list": []any{2.0}, "extra": true}
	if diff := cmp.Diff(want, MergeValues(a, b)); diff != "" {
		t.Errorf("MergeValues mismatch (-want +got):\n%s", diff)
	}
	if a["image"].(map[string]any)["tag"] != "1" {
		t.Errorf("MergeValues changed its first argument: %v", a)
	}
}
