package chart_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/chartserver"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/chart"
)

// BenchmarkFetch measures what a comparison pays for a chart source: an
// exact version already in the cache (no network), a constraint resolved
// against an index up to a listing's age old (no network), and a
// constraint with a fresh index (a refresh: one index download), against
// a repository of 200 versions.
func BenchmarkFetch(b *testing.B) {
	repo := chartserver.NewRepo("", "")
	defer repo.Close()
	for i := range 200 {
		v := fmt.Sprintf("1.%d.0", i)
		data, err := chartserver.Package("web", v, map[string]string{"templates/cm.yaml": "kind: ConfigMap\n"})
		if err != nil {
			b.Fatal(err)
		}
		repo.Add("web", v, data, "")
	}
	c, err := chart.New(chart.Options{Dir: b.TempDir(), AllowLoopback: anyLoopback})
	if err != nil {
		b.Fatal(err)
	}
	repos := []reposerver.HelmRepository{{URL: repo.URL, Insecure: true}}
	for _, bc := range []struct {
		name, version string
		maxAge        time.Duration
	}{
		{"exact-cached", "1.199.0", 0},
		{"constraint-index-cached", "^1", time.Hour},
		{"constraint-fresh-index", "^1", 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			o := chart.FetchOptions{Repositories: repos, IndexMaxAge: bc.maxAge}
			if _, err := c.Fetch(b.Context(), repo.URL, "web", bc.version, o); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := c.Fetch(b.Context(), repo.URL, "web", bc.version, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
