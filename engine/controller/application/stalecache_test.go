package application

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestStatusWriteBetween: an operation pass may decide a sync from a
// cached Application that lacks only the last write of a status pass
// (which holds no operation result); any other write, or a status pass's
// that changed the operation or its state, leaves the cache stale.
func TestStatusWriteBetween(t *testing.T) {
	key := types.NamespacedName{Namespace: "argocd", Name: "shop"}
	app := func(rv string, phase v1alpha1.OperationPhase) *v1alpha1.Application {
		a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, ResourceVersion: rv}}
		if phase != "" {
			a.Status.OperationState = &v1alpha1.OperationState{Phase: phase}
		}
		return a
	}
	for _, tc := range []struct {
		name      string
		pass      pass
		from, to  string
		wantFresh bool
	}{
		{name: "a status pass's write", pass: pass{key: key, orig: app("1", ""), app: app("2", "")}, from: "1", to: "2", wantFresh: true},
		{name: "another write since", pass: pass{key: key, orig: app("1", ""), app: app("2", "")}, from: "1", to: "3"},
		{name: "an older cache", pass: pass{key: key, orig: app("1", ""), app: app("2", "")}, from: "0", to: "2"},
		{name: "an operation pass's write", pass: pass{key: key, orig: app("1", ""), app: app("2", ""), operation: true}, from: "1", to: "2"},
		{name: "a write of the operation state", pass: pass{key: key, orig: app("1", v1alpha1.OperationRunning), app: app("2", v1alpha1.OperationSucceeded)}, from: "1", to: "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reconciler{}
			p := tc.pass
			r.noteStatusWrite(&p)
			if got := r.statusWriteBetween(key, tc.from, tc.to); got != tc.wantFresh {
				t.Errorf("statusWriteBetween(%s, %s) = %v, want %v", tc.from, tc.to, got, tc.wantFresh)
			}
		})
	}
}
