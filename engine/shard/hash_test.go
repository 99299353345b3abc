package shard

import (
	"fmt"
	"math"
	"testing"
)

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("argocd/app-%d", i)
	}
	return out
}

func TestOwnerSpreadsEvenly(t *testing.T) {
	members := []string{"tollgate-controller-7d9f-abcde", "tollgate-controller-7d9f-fghij", "tollgate-controller-7d9f-klmno"}
	count := map[string]int{}
	const n = 6000
	for _, k := range keys(n) {
		count[Owner(members, k)]++
	}
	for _, m := range members {
		if share := float64(count[m]) / n; math.Abs(share-1.0/3) > 0.03 {
			t.Errorf("%s owns %.3f of the keys, want 1/3 ± 0.03 (%v)", m, share, count)
		}
	}
}

func TestOwnerMovesOnlyTheShareOfTheChange(t *testing.T) {
	before := []string{"a", "b", "c"}
	joined := []string{"a", "b", "c", "d"}
	left := []string{"a", "c"}
	moved, movedLeft := 0, 0
	for _, k := range keys(4000) {
		old := Owner(before, k)
		if now := Owner(joined, k); now != old {
			moved++
			if now != "d" {
				t.Fatalf("%s moved from %s to %s when d joined; only moves to d are allowed", k, old, now)
			}
		}
		if now := Owner(left, k); now != old {
			movedLeft++
			if old != "b" {
				t.Fatalf("%s moved from %s to %s when b left; only b's keys may move", k, old, now)
			}
		}
	}
	if share := float64(moved) / 4000; math.Abs(share-0.25) > 0.03 {
		t.Errorf("%.3f of the keys moved when a fourth member joined, want 1/4 ± 0.03", share)
	}
	if share := float64(movedLeft) / 4000; math.Abs(share-1.0/3) > 0.03 {
		t.Errorf("%.3f of the keys moved when one of three left, want 1/3 ± 0.03", share)
	}
}

func TestOwnerIgnoresOrderAndEmpty(t *testing.T) {
	if got := Owner(nil, "argocd/x"); got != "" {
		t.Fatalf("Owner of no members = %q, want empty", got)
	}
	for _, k := range keys(200) {
		if a, b := Owner([]string{"x", "y", "z"}, k), Owner([]string{"z", "x", "y"}, k); a != b {
			t.Fatalf("%s: owner %s in one order, %s in another", k, a, b)
		}
	}
}
