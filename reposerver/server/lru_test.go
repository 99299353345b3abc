package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLRU(t *testing.T) {
	c := newLRU[string, string](6, func(v string) int64 { return int64(len(v)) })
	c.Add("a", "aa")
	c.Add("b", "bb")
	if _, ok := c.Get("a"); !ok { // a is now the most recently used
		t.Fatal("a missing")
	}
	c.Add("c", "ccc") // 7 > 6: evicts b
	var got []string
	for _, k := range []string{"a", "b", "c"} {
		if v, ok := c.Get(k); ok {
			got = append(got, k+"="+v)
		}
	}
	if diff := cmp.Diff([]string{"a=aa", "c=ccc"}, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	c.Add("a", "a")
	if v, _ := c.Get("a"); v != "a" || c.Len() != 2 || c.Cost() != 4 {
		t.Errorf("after re-adding a: a=%q len=%d cost=%d, want a, 2 and 4", v, c.Len(), c.Cost())
	}
	c.Add("big", "1234567") // costs more than the bound: not kept, nothing evicted
	if _, ok := c.Get("big"); ok || c.Len() != 2 {
		t.Errorf("a value over the bound was kept or evicted others: len=%d", c.Len())
	}
	c.Add("d", "dddddd") // fills the bound alone
	if c.Len() != 1 || c.Cost() != 6 {
		t.Errorf("after d: len=%d cost=%d, want 1 and 6", c.Len(), c.Cost())
	}
}
