package engine_test

import (
	"fmt"
	"testing"
)

// TestComparisonListsNoWholeKind: a comparison finds the objects its
// Application tracks in the metadata cache's tracking index, not by
// listing every object of each kind in the cluster, which made the first
// sync of N Applications cost N times N. The Application syncs, prunes
// (TestPrune) and compares again without one LIST of its kinds.
func TestComparisonListsNoWholeKind(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	f.application(automated(true, true), nil)
	f.waitSynced(f.head)
	f.waitPasses(2)
	families, err := scrapeMetrics()
	if err != nil {
		t.Fatal(err)
	}
	app := map[string]string{"namespace": argoNS, "name": f.name}
	if n := seriesTotal(seriesMatching(families, "argocd_app_k8s_request_total", app)); n == 0 {
		t.Fatal("no request of the Application counted: the test would prove nothing")
	}
	for _, kind := range []string{"configmaps", "deployments"} {
		list := map[string]string{"namespace": argoNS, "name": f.name, "verb": "List", "resource_kind": kind}
		if n := seriesTotal(seriesMatching(families, "argocd_app_k8s_request_total", list)); n != 0 {
			t.Errorf("%v LIST requests of %s by the Application, want 0 (%s)", n, kind, fmt.Sprint(list))
		}
	}
}
