package faults

import (
	"context"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// TestSyncDoesNotBlockComparisons runs a replica with one operation
// processor. While a sync holds it, waiting in wave 0 for a Deployment,
// another Application's new commit is still compared (OutOfSync at the
// new revision) by the status processors; its sync waits for the
// operation processor and runs once the first sync ends.
func TestSyncDoesNotBlockComparisons(t *testing.T) {
	slow, quick := "blocking", "compared"
	files := func(name string) map[string]string {
		if name == slow {
			return appFiles(name)
		}
		return configMapFiles("v1")(name)
	}
	ns, repoURL, git := repository(t, []string{slow, quick}, files)
	r := startReplica(t, "replica-processors", replicaOptions{leaseDuration: time.Minute, resync: 5 * time.Second,
		args: []string{"--operation-processors", "1", "--status-processors", "2"}})
	waitMembers(t, 1, r)
	applications(t, ns, repoURL, []string{quick})
	waitSyncedAt(t, []string{quick}, git.Head(t, "config", gitserver.DefaultBranch))
	applications(t, ns, repoURL, []string{slow})
	eventually(t, "the slow sync Running", func() (bool, string) {
		return allApps(t, []string{slow}, func(app *v1alpha1.Application) bool {
			st := app.Status.OperationState
			return st != nil && st.Phase == v1alpha1.OperationRunning
		})
	})

	next := git.Commit(t, "config", configMapFiles("v2")(quick), "v2 of "+quick)
	eventually(t, quick+" compared at the new commit while the slow sync runs", func() (bool, string) {
		return allApps(t, []string{quick}, func(app *v1alpha1.Application) bool {
			return app.Status.Sync.Revision == next && app.Status.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
		})
	})
	if ok, why := allApps(t, []string{slow}, func(app *v1alpha1.Application) bool {
		st := app.Status.OperationState
		return st != nil && st.Phase == v1alpha1.OperationRunning
	}); !ok {
		t.Fatalf("the slow sync ended before the comparison: %s", why)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go markAvailable(ctx, ns, slow)
	waitSyncedAt(t, []string{slow, quick}, next)
	t.Logf("%s was compared at %s while %s's sync held the only operation processor", quick, next[:7], slow)
}
