package reposerver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLRU(t *testing.T) {
	c := newLRU[string, int](2)
	c.Add("a", 1)
	c.Add("b", 2)
	if _, ok := c.Get("a"); !ok { // a is now the most recently used
		t.Fatal("a missing")
	}
	c.Add("c", 3) // evicts b
	var got []string
	for _, k := range []string{"a", "b", "c"} {
		if v, ok := c.Get(k); ok {
			got = append(got, k+"="+string(rune('0'+v)))
		}
	}
	if diff := cmp.Diff([]string{"a=1", "c=3"}, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	c.Add("a", 9)
	if v, _ := c.Get("a"); v != 9 || c.Len() != 2 {
		t.Errorf("after re-adding a: a=%d len=%d, want 9 and 2", v, c.Len())
	}
}
