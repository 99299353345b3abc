package application

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestSyncWindowDescriptionShown: a sync window's description is shown
// with the window, as Argo CD's UI and CLI show it: in the reason a sync
// is held back (the SyncError condition, the operation's message) and in
// what `tollgate app windows` lists.
func TestSyncWindowDescriptionShown(t *testing.T) {
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "billing"}}
	app.Spec.Destination = v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "billing"}
	freeze := v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 18 * * 5", Duration: "64h", Applications: []string{"*"}, Description: "weekend freeze"}
	proj := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{SyncWindows: []v1alpha1.SyncWindow{freeze}}}
	// Saturday 2030-01-05 12:00 UTC, inside the window.
	now := time.Date(2030, 1, 5, 12, 0, 0, 0, time.UTC)
	v, err := syncWindowsAllow(proj, app, now, false, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `a deny window is active: deny "0 18 * * 5" for 64h (weekend freeze)`; v.allowed || v.reason != want {
		t.Errorf("verdict %+v, want refused with reason %q", v, want)
	}
	states, _, automated, err := SyncWindows(proj, app, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 || states[0].Window.Description != "weekend freeze" || !states[0].Active || !strings.Contains(automated, "(weekend freeze)") {
		t.Errorf("SyncWindows: states %+v, automated %q; want the active window with its description", states, automated)
	}
}
