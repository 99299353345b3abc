package application

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

func TestSyncWindowsAllow(t *testing.T) {
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "billing"}}
	app.Spec.Destination = v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "billing"}
	// Monday 2030-01-07 10:30 UTC.
	now := time.Date(2030, 1, 7, 10, 30, 0, 0, time.UTC)
	freeze := v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 10 * * *", Duration: "1h", Applications: []string{"*"}}
	night := v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 22 * * *", Duration: "2h", Namespaces: []string{"bill*"}}
	day := v1alpha1.SyncWindow{Kind: "allow", Schedule: "0 9 * * 1-5", Duration: "8h", Clusters: []string{"https://*"}}
	other := v1alpha1.SyncWindow{Kind: "deny", Schedule: "* * * * *", Duration: "1h", Applications: []string{"web-*"}}
	tests := []struct {
		name    string
		windows []v1alpha1.SyncWindow
		manual  bool
		now     time.Time
		started time.Time
		allowed bool
		reason  string
	}{
		{name: "no windows", allowed: true},
		{name: "active deny", windows: []v1alpha1.SyncWindow{freeze}, reason: `a deny window is active: deny "0 10 * * *" for 1h`},
		{name: "active deny, manual without manualSync", windows: []v1alpha1.SyncWindow{freeze}, manual: true, reason: "a deny window is active"},
		{name: "active deny, manual with manualSync", windows: []v1alpha1.SyncWindow{withManual(freeze)}, manual: true, allowed: true},
		{name: "deny no longer active", windows: []v1alpha1.SyncWindow{freeze}, now: now.Add(time.Hour), allowed: true},
		{name: "deny wins over an active allow", windows: []v1alpha1.SyncWindow{freeze, day}, reason: "a deny window is active"},
		{name: "inside an allow window", windows: []v1alpha1.SyncWindow{day}, allowed: true},
		{name: "outside every allow window", windows: []v1alpha1.SyncWindow{night}, reason: `outside every allow window: allow "0 22 * * *" for 2h`},
		{name: "outside, manual with manualSync", windows: []v1alpha1.SyncWindow{withManual(night)}, manual: true, allowed: true},
		{name: "outside, manual with manualSync on one allow window only", windows: []v1alpha1.SyncWindow{withManual(night), {Kind: "allow", Schedule: "0 1 * * *", Duration: "1h", Applications: []string{"*"}}}, manual: true, reason: "outside every allow window"},
		{name: "a window for other applications", windows: []v1alpha1.SyncWindow{other}, allowed: true},
		{name: "and operator needs every list", windows: []v1alpha1.SyncWindow{{Kind: "deny", Schedule: "* * * * *", Duration: "1h", Applications: []string{"billing"}, Namespaces: []string{"web"}, AndOperator: true}}, allowed: true},
		// syncOverrun, as in Argo CD: a sync that started while allowed
		// goes on when every window that now denies has it.
		{name: "overrun into a deny window", windows: []v1alpha1.SyncWindow{withOverrun(freeze)}, started: now.Add(-time.Hour), allowed: true},
		{name: "overrun, started inside the deny window", windows: []v1alpha1.SyncWindow{withOverrun(freeze)}, started: now.Add(-10 * time.Minute), reason: "a deny window is active"},
		{name: "overrun, one active deny without it", windows: []v1alpha1.SyncWindow{withOverrun(freeze), {Kind: "deny", Schedule: "0 9 * * *", Duration: "2h", Applications: []string{"*"}}}, started: now.Add(-2 * time.Hour), reason: "a deny window is active"},
		{name: "deny without overrun", windows: []v1alpha1.SyncWindow{freeze}, started: now.Add(-time.Hour), reason: "a deny window is active"},
		{name: "overrun past the end of an allow window", windows: []v1alpha1.SyncWindow{withOverrun(night)}, started: time.Date(2030, 1, 6, 23, 30, 0, 0, time.UTC), allowed: true},
		{name: "allow window without overrun", windows: []v1alpha1.SyncWindow{night}, started: time.Date(2030, 1, 6, 23, 30, 0, 0, time.UTC), reason: "outside every allow window"},
		{name: "time zone", windows: []v1alpha1.SyncWindow{{Kind: "deny", Schedule: "0 11 * * *", Duration: "1h", Applications: []string{"*"}, TimeZone: "Europe/Paris"}}, reason: "a deny window is active"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at := tc.now
			if at.IsZero() {
				at = now
			}
			proj := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{SyncWindows: tc.windows}}
			v, err := syncWindowsAllow(proj, app, at, tc.manual, tc.started)
			if err != nil {
				t.Fatal(err)
			}
			if v.allowed != tc.allowed || !strings.Contains(v.reason, tc.reason) {
				t.Errorf("verdict %+v, want allowed %v with reason containing %q", v, tc.allowed, tc.reason)
			}
		})
	}
	for _, bad := range []v1alpha1.SyncWindow{
		{Kind: "deny", Schedule: "every day", Duration: "1h", Applications: []string{"*"}},
		{Kind: "deny", Schedule: "* * * * *", Duration: "soon", Applications: []string{"*"}},
		{Kind: "deny", Schedule: "* * * * *", Duration: "1h", Applications: []string{"*"}, TimeZone: "Mars/Olympus"},
	} {
		proj := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{SyncWindows: []v1alpha1.SyncWindow{bad}}}
		if _, err := syncWindowsAllow(proj, app, now, false, time.Time{}); err == nil || !strings.Contains(err.Error(), "sync window deny") {
			t.Errorf("window %+v: error %v, want one naming the window", bad, err)
		}
	}
}

func withManual(w v1alpha1.SyncWindow) v1alpha1.SyncWindow {
	w.ManualSync = true
	return w
}

func withOverrun(w v1alpha1.SyncWindow) v1alpha1.SyncWindow {
	w.SyncOverrun = true
	return w
}
