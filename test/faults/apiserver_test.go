package faults

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// TestAPIServerStoppedMidWave stops kube-apiserver (etcd stays up) while a
// sync waits in wave 0 for its Deployment, for longer than the replica's
// renew deadline, and starts it again. The sync resumes and succeeds once
// the Deployment is available; no observer ever sees it Succeeded before,
// wave 1 (a ConfigMap) is applied only after wave 0 is healthy, and
// nothing outside the plan is applied.
func TestAPIServerStoppedMidWave(t *testing.T) {
	const name = "outage"
	ns, repoURL, git := repository(t, []string{name}, appFiles)
	r := startReplica(t, "replica-outage", replicaOptions{leaseDuration: 6 * time.Second, resync: 5 * time.Second})
	waitMembers(t, 1, r)
	applications(t, ns, repoURL, []string{name})
	eventually(t, "the sync Running in wave 0", func() (bool, string) {
		return allApps(t, []string{name}, func(app *v1alpha1.Application) bool {
			st := app.Status.OperationState
			return st != nil && st.Phase == v1alpha1.OperationRunning && len(r.api.appliesTo("/deployments/"+name+"-web")) > 0
		})
	})

	// An observer through the whole outage: the operation is never
	// Succeeded before the Deployment is marked available.
	var markedAt atomic.Int64
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	lied := make(chan string, 1)
	go func() {
		for ctx.Err() == nil {
			var app v1alpha1.Application
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: argoNS, Name: name}, &app); err == nil {
				if st := app.Status.OperationState; st != nil && st.Phase == v1alpha1.OperationSucceeded && markedAt.Load() == 0 {
					select {
					case lied <- describe(&app):
					default:
					}
				}
			}
			time.Sleep(100 * time.Millisecond) // the observer's poll interval
		}
	}()

	if err := env.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	// The outage under test, not a wait for anything: past the renew
	// deadline (4s) and the lease (6s).
	time.Sleep(10 * time.Second)
	if err := env.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the replica to hold its membership again", func() (bool, string) {
		m := r.metric("tollgate_engine_shard_members")
		return m == 1, fmt.Sprintf("members: %v", m)
	})
	// A few passes with the API server back, wave 0 still unhealthy.
	poll.Consistently(t, "wave 1 not applied while wave 0 is unhealthy", 3*time.Second, func() (bool, string) {
		var cm corev1.ConfigMap
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name + "-settings"}, &cm)
		return apierrors.IsNotFound(err), fmt.Sprintf("get ConfigMap %s-settings: %v", name, err)
	})

	markedAt.Store(time.Now().UnixNano())
	go markAvailable(ctx, ns, name)
	waitSyncedAt(t, []string{name}, git.Head(t, "config", gitserver.DefaultBranch))
	select {
	case state := <-lied:
		t.Errorf("the operation was reported Succeeded before wave 0 was healthy: %s", state)
	default:
	}
	for _, ap := range r.api.appliesTo("/") {
		if !strings.HasSuffix(ap.path, "/deployments/"+name+"-web") && !strings.HasSuffix(ap.path, "/configmaps/"+name+"-settings") {
			t.Errorf("applied outside the plan: %s", ap.path)
		}
		if strings.HasSuffix(ap.path, "/configmaps/"+name+"-settings") && ap.at.UnixNano() < markedAt.Load() {
			t.Errorf("wave 1 applied at %s, before wave 0 was healthy", ap.at.Format(time.StampMilli))
		}
	}
}
