package application

import (
	"fmt"
	"testing"
)

// TestCacheOptionsOneEntryPerType: ByObject is keyed by pointer, so a second
// entry for a type would leave which namespaces the cache serves to map
// order; with ApplicationSet namespaces, Applications are cached there too.
func TestCacheOptionsOneEntryPerType(t *testing.T) {
	opts := CacheOptions("argocd", nil, []string{"argocd", "tenants"})
	seen := map[string]int{}
	for obj, by := range opts.ByObject {
		kind := fmt.Sprintf("%T", obj)
		seen[kind]++
		if kind == "*v1alpha1.Application" {
			if _, ok := by.Namespaces["tenants"]; !ok {
				t.Errorf("Applications cached in %v, want tenants among them", by.Namespaces)
			}
		}
	}
	for kind, n := range seen {
		if n != 1 {
			t.Errorf("%d cache entries for %s", n, kind)
		}
	}
	if seen["*v1alpha1.ApplicationSet"] != 1 {
		t.Errorf("no cache entry for ApplicationSets: %v", seen)
	}
}
