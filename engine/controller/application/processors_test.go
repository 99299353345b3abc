package application

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestKeyLocks: a comparison asked for while the operation holds an
// Application is recorded, not run, and reported once when it ends; locks
// of released Applications are not kept.
func TestKeyLocks(t *testing.T) {
	var l keyLocks
	key := types.NamespacedName{Namespace: "argocd", Name: "web"}
	op := l.lock(key)
	if _, ok := l.tryLock(key); ok {
		t.Fatal("a comparison took the lock the operation holds")
	}
	other, ok := l.tryLock(types.NamespacedName{Namespace: "argocd", Name: "db"})
	if !ok {
		t.Fatal("another Application's lock is taken")
	}
	if l.unlock(types.NamespacedName{Namespace: "argocd", Name: "db"}, other) {
		t.Error("an Application nobody asked about is dirty")
	}
	if !l.unlock(key, op) {
		t.Error("the comparison asked for during the operation was not reported")
	}
	cmp, ok := l.tryLock(key)
	if !ok {
		t.Fatal("the lock is still held after the operation")
	}
	if l.unlock(key, cmp) {
		t.Error("the comparison was reported twice")
	}
	if len(l.m) != 0 {
		t.Errorf("%d locks kept after every one was released", len(l.m))
	}
}
