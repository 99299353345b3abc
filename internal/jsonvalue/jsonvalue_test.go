package jsonvalue

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCopy(t *testing.T) {
	orig := map[string]any{"a": []any{map[string]any{"b": "c"}, 1.5}, "d": nil, "e": map[string]string{"f": "g"}}
	cp := Copy(orig).(map[string]any)
	if diff := cmp.Diff(orig, cp); diff != "" {
		t.Fatalf("copy differs (-orig +copy):\n%s", diff)
	}
	cp["a"].([]any)[0].(map[string]any)["b"] = "changed"
	cp["d"] = "set"
	if orig["a"].([]any)[0].(map[string]any)["b"] != "c" || orig["d"] != nil {
		t.Errorf("changing the copy changed the original: %v", orig)
	}
}
