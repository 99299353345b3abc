package shard

import (
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func lease(member string, renewed time.Time) coordinationv1.Lease {
	return coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: leaseName(member), ResourceVersion: "1"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To(member), LeaseDurationSeconds: ptr.To(int32(15)),
			RenewTime: ptr.To(metav1.NewMicroTime(renewed)),
		},
	}
}

// TestObserveCountsOnItsOwnClock: a member counts others live from when it
// saw their renewal change, whatever their clocks say, and gone a lease
// duration after the last change it saw.
func TestObserveCountsOnItsOwnClock(t *testing.T) {
	c := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
	m, err := New(fakeClient{}, Options{Namespace: "ns", Group: "argocd", Identity: "a", LeaseDuration: 15 * time.Second, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	m.renewed.Store(c.Now().UnixNano())
	// b's clock is an hour behind: its renewal time is never compared
	// with ours.
	skewed := c.Now().Add(-time.Hour)
	if !m.observe([]coordinationv1.Lease{lease("a", c.Now()), lease("b", skewed)}) {
		t.Fatal("first observation: no change reported")
	}
	if got := m.Members(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("members = %v, want [a b]", got)
	}
	// 10s later, b renewed (its clock moved too), a renewed.
	c.Step(10 * time.Second)
	m.renewed.Store(c.Now().UnixNano())
	m.observe([]coordinationv1.Lease{lease("a", c.Now()), lease("b", skewed.Add(10*time.Second))})
	// 14s after that, b did not renew again: still live.
	c.Step(14 * time.Second)
	m.renewed.Store(c.Now().UnixNano())
	if m.observe([]coordinationv1.Lease{lease("a", c.Now()), lease("b", skewed.Add(10*time.Second))}) {
		t.Fatal("b counted gone before its lease duration passed since its last renewal was seen")
	}
	// 2s more: 16s since b's last renewal was seen.
	c.Step(2 * time.Second)
	m.renewed.Store(c.Now().UnixNano())
	if !m.observe([]coordinationv1.Lease{lease("a", c.Now()), lease("b", skewed.Add(10*time.Second))}) {
		t.Fatal("b not counted gone a lease duration after its last renewal was seen")
	}
	if got := m.Members(); !slices.Equal(got, []string{"a"}) || !m.Owns("argocd/anything") {
		t.Fatalf("members = %v, owns = %v; want [a], true", got, m.Owns("argocd/anything"))
	}
}

// TestHoldingEndsBeforeOthersCountItGone: a member whose renewals fail
// stops owning anything two thirds of the lease duration after its last
// renewal, a third before another member may take its Applications.
func TestHoldingEndsBeforeOthersCountItGone(t *testing.T) {
	c := testingclock.NewFakeClock(time.Unix(2_000_000, 0))
	m, err := New(fakeClient{}, Options{Namespace: "ns", Group: "argocd", Identity: "a", LeaseDuration: 15 * time.Second, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	if m.Holding() || m.Owns("argocd/x") {
		t.Fatal("holding before the first renewal")
	}
	m.renewed.Store(c.Now().UnixNano())
	m.observe([]coordinationv1.Lease{lease("a", c.Now())})
	if !m.Owns("argocd/x") {
		t.Fatal("the only member does not own an Application")
	}
	c.Step(9 * time.Second)
	if !m.Holding() {
		t.Fatal("not holding 9s after the last renewal (deadline 10s)")
	}
	c.Step(time.Second)
	if m.Holding() || m.Owns("argocd/x") {
		t.Fatal("still holding 10s after the last renewal")
	}
}

// fakeClient stands for the API server where a test reaches none: New
// only checks that a client is given, and observe never calls it.
type fakeClient struct{ client.Client }
