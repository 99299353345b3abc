package application

import (
	"fmt"
	"strings"
	"time"

	"github.com/gobwas/glob"
	"github.com/robfig/cron/v3"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// Sync windows (AppProject spec.syncWindows) decide when an Application
// may sync, with Argo CD's rules: a window is active from each time its
// cron schedule fires for its duration, in its time zone; it applies to an
// Application when one of its applications, namespaces or clusters globs
// matches (all of the lists that are set, with andOperator). An active
// deny window blocks syncs (manual ones too unless every active deny
// window has manualSync); otherwise, when allow windows apply and none is
// active, only manual syncs of a window with manualSync may run.

// cronParser parses the five-field schedules Argo CD accepts.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// windowVerdict is what the sync windows of a project say about a sync
// now.
type windowVerdict struct {
	allowed bool
	// reason explains a refusal, naming the windows.
	reason string
}

// WindowState is a sync window that applies to an Application, and
// whether it is open.
type WindowState struct {
	Window v1alpha1.SyncWindow
	Active bool
}

// SyncWindows returns the windows of proj that apply to app, whether each
// is open at now, and whether a manual and an automated sync may run now,
// with the reason when not ("" when allowed): what `tollgate app windows`
// shows, by the rules the engine syncs by.
func SyncWindows(proj *v1alpha1.AppProject, app *v1alpha1.Application, now time.Time) (states []WindowState, manual, automated string, err error) {
	for _, w := range proj.Spec.SyncWindows {
		if !windowMatches(w, app) {
			continue
		}
		active, err := WindowActive(w, now)
		if err != nil {
			return nil, "", "", err
		}
		states = append(states, WindowState{Window: w, Active: active})
	}
	m, err := syncWindowsAllow(proj, app, now, true, time.Time{})
	if err != nil {
		return nil, "", "", err
	}
	a, err := syncWindowsAllow(proj, app, now, false, time.Time{})
	if err != nil {
		return nil, "", "", err
	}
	return states, m.reason, a.reason, nil
}

// syncWindowsAllow applies the windows of proj to app at now for a manual
// or an automated sync that started at started (zero: it starts now). A
// window that cannot be read (bad schedule, duration or time zone) is an
// error naming it.
//
// As in Argo CD, syncOverrun lets a sync that started while the windows
// allowed it go on: into deny windows that became active since, when
// every active deny window has syncOverrun; past the end of its allow
// window, when every allow window has syncOverrun.
func syncWindowsAllow(proj *v1alpha1.AppProject, app *v1alpha1.Application, now time.Time, manual bool, started time.Time) (windowVerdict, error) {
	v, overrun, err := windowsAt(proj, app, now, manual)
	if err != nil || v.allowed || !overrun || started.IsZero() || !started.Before(now) {
		return v, err
	}
	then, _, err := windowsAt(proj, app, started, manual)
	if err != nil || !then.allowed {
		return v, err
	}
	return windowVerdict{allowed: true}, nil
}

// windowsAt applies the windows of proj to app at now; overrun is set when
// they deny and every window that denies has syncOverrun (every active deny
// window, or every allow window when none is active).
func windowsAt(proj *v1alpha1.AppProject, app *v1alpha1.Application, now time.Time, manual bool) (v windowVerdict, overrun bool, err error) {
	var activeDeny, allows, activeAllow []v1alpha1.SyncWindow
	for _, w := range proj.Spec.SyncWindows {
		if !windowMatches(w, app) {
			continue
		}
		active, err := WindowActive(w, now)
		if err != nil {
			return windowVerdict{}, false, err
		}
		switch w.Kind {
		case "deny":
			if active {
				activeDeny = append(activeDeny, w)
			}
		case "allow":
			allows = append(allows, w)
			if active {
				activeAllow = append(activeAllow, w)
			}
		}
	}
	if len(activeDeny) > 0 {
		manualOK := true
		for _, w := range activeDeny {
			manualOK = manualOK && w.ManualSync
		}
		if manual && manualOK {
			return windowVerdict{allowed: true}, false, nil
		}
		return windowVerdict{reason: "a deny window is active: " + describeWindows(activeDeny)}, allOverrun(activeDeny), nil
	}
	if len(activeAllow) > 0 || len(allows) == 0 {
		return windowVerdict{allowed: true}, false, nil
	}
	// As Argo CD, a manual sync outside the allow windows runs only when
	// every one of them has manualSync.
	manualOK := true
	for _, w := range allows {
		manualOK = manualOK && w.ManualSync
	}
	if manual && manualOK {
		return windowVerdict{allowed: true}, false, nil
	}
	return windowVerdict{reason: "outside every allow window: " + describeWindows(allows)}, allOverrun(allows), nil
}

// allOverrun reports whether every window of ws has syncOverrun.
func allOverrun(ws []v1alpha1.SyncWindow) bool {
	for _, w := range ws {
		if !w.SyncOverrun {
			return false
		}
	}
	return len(ws) > 0
}

// windowMatches reports whether window w applies to app: any of its
// applications, namespaces and clusters globs matches (every list that is
// set, with andOperator).
func windowMatches(w v1alpha1.SyncWindow, app *v1alpha1.Application) bool {
	dest := app.Spec.Destination
	lists := []struct {
		globs  []string
		values []string
	}{
		{w.Applications, []string{app.Name}},
		{w.Namespaces, []string{dest.Namespace}},
		{w.Clusters, []string{dest.Server, dest.Name}},
	}
	matched, set := 0, 0
	for _, l := range lists {
		if len(l.globs) == 0 {
			continue
		}
		set++
		if anyGlob(l.globs, l.values) {
			matched++
		}
	}
	if w.AndOperator {
		return set > 0 && matched == set
	}
	return matched > 0
}

// anyGlob reports whether one of globs matches one of the non-empty values
// (`*` matches across `/`, as in Argo CD).
func anyGlob(globs, values []string) bool {
	for _, pattern := range globs {
		g, err := glob.Compile(pattern)
		if err != nil {
			continue
		}
		for _, v := range values {
			if v != "" && g.Match(v) {
				return true
			}
		}
	}
	return false
}

// WindowActive reports whether w is open at now: its schedule fired within
// its duration before now, in its time zone (default UTC). An unreadable
// window is an error naming it.
func WindowActive(w v1alpha1.SyncWindow, now time.Time) (bool, error) {
	loc := time.UTC
	if w.TimeZone != "" {
		l, err := time.LoadLocation(w.TimeZone)
		if err != nil {
			return false, fmt.Errorf("sync window %s: timeZone %q: %w", describeWindow(w), w.TimeZone, err)
		}
		loc = l
	}
	sched, err := cronParser.Parse(w.Schedule)
	if err != nil {
		return false, fmt.Errorf("sync window %s: schedule: %w", describeWindow(w), err)
	}
	d, err := time.ParseDuration(w.Duration)
	if err != nil || d <= 0 {
		return false, fmt.Errorf("sync window %s: duration %q: want a positive duration such as 1h", describeWindow(w), w.Duration)
	}
	now = now.In(loc)
	return !sched.Next(now.Add(-d)).After(now), nil
}

// describeWindow names a window for messages.
func describeWindow(w v1alpha1.SyncWindow) string {
	s := fmt.Sprintf("%s %q for %s", w.Kind, w.Schedule, w.Duration)
	if w.Description != "" {
		s += " (" + w.Description + ")"
	}
	return s
}

func describeWindows(ws []v1alpha1.SyncWindow) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = describeWindow(w)
	}
	return strings.Join(out, "; ")
}
