package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
	"github.com/tollgate-dev/tollgate/engine/shard"
	"github.com/tollgate-dev/tollgate/test/gitserver"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// appCount Applications share the two replicas.
const appCount = 8

// appFiles are one Application's manifests: a Deployment in wave 0, whose
// health holds the sync until the test marks it available, and a
// ConfigMap in wave 1.
func appFiles(name string) map[string]string {
	return map[string]string{
		"apps/" + name + "/deployment.yaml": fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s-web
spec:
  replicas: 1
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: web
        image: nginx:1.27
`, name),
		"apps/" + name + "/configmap.yaml": fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s-settings
  annotations:
    argocd.argoproj.io/sync-wave: "1"
data:
  key: value
`, name),
	}
}

// TestReplicasShareAndSurviveEachOther runs two controller replicas with
// --sharding dynamic:
//
//  1. replica-a alone starts the syncs of every Application; they wait in
//     wave 0 for their Deployments;
//  2. replica-b joins and owns a share, but leaves the Applications whose
//     operation replica-a runs (fenced) alone; replica-a finishes them,
//     and replica-b has nothing to apply after;
//  3. replica-a is killed (SIGKILL) in the middle of the other syncs;
//     replica-b takes them within the lease duration plus a resync, and
//     every operation ends Succeeded;
//
// and no object is ever applied by both replicas at once.
func TestReplicasShareAndSurviveEachOther(t *testing.T) {
	const leaseDuration, resync = 4 * time.Second, 5 * time.Second
	var names []string
	for i := range appCount {
		// Fixed names: rendezvous hashing gives each replica a share of
		// these (4 each).
		names = append(names, fmt.Sprintf("shared-%d", i))
	}
	ns, repoURL, _ := repository(t, names, appFiles)
	opts := replicaOptions{leaseDuration: leaseDuration, resync: resync}
	a := startReplica(t, "replica-a", opts)
	waitMembers(t, 1, a)
	applications(t, ns, repoURL, names)
	// 1. Every sync runs on replica-a, fenced, waiting in wave 0.
	eventually(t, "every sync Running on replica-a", func() (bool, string) {
		return allApps(t, names, func(app *v1alpha1.Application) bool {
			st := app.Status.OperationState
			return st != nil && st.Phase == v1alpha1.OperationRunning && app.Annotations[application.AnnotationOperationReplica] == "replica-a"
		})
	})

	// 2. replica-b joins: the members split the Applications, and
	// replica-b leaves those replica-a runs alone.
	b := startReplica(t, "replica-b", opts)
	waitMembers(t, 2, a, b)
	eventually(t, "the replicas to split the Applications", func() (bool, string) {
		na, nb := a.metric("tollgate_engine_shard_applications"), b.metric("tollgate_engine_shard_applications")
		return na > 0 && nb > 0 && na+nb == appCount, fmt.Sprintf("replica-a owns %v, replica-b %v", na, nb)
	})
	// ownedByB are replica-b's share, whose syncs replica-a runs; ownedByA
	// the rest.
	var ownedByA, ownedByB []string
	for _, name := range names {
		if shard.Owner([]string{"replica-a", "replica-b"}, argoNS+"/"+name) == "replica-b" {
			ownedByB = append(ownedByB, name)
		} else {
			ownedByA = append(ownedByA, name)
		}
	}
	// replica-b's passes over its share, while replica-a runs their syncs.
	nothingFromB := func() (bool, string) {
		if got := b.api.appliesTo("/namespaces/" + ns + "/"); len(got) > 0 {
			return false, "replica-b applied " + got[0].path
		}
		return true, ""
	}
	poll.Consistently(t, "replica-b applying nothing while replica-a runs the operations (fenced)", 2*resync, nothingFromB)
	// replica-a finishes the syncs of replica-b's share: replica-b starts
	// none of them meanwhile, and has nothing to apply after.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go markAvailable(ctx, ns, ownedByB...)
	eventually(t, "replica-a to finish the syncs of replica-b's share", func() (bool, string) {
		return allApps(t, ownedByB, func(app *v1alpha1.Application) bool {
			st := app.Status.OperationState
			return st != nil && st.Phase == v1alpha1.OperationSucceeded && app.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced &&
				app.Annotations[application.AnnotationOperationReplica] == ""
		})
	})
	poll.Consistently(t, "replica-b applying nothing of what replica-a synced", resync, nothingFromB)

	// 3. replica-a dies in the middle of the other syncs.
	if err := checkRunningOn(t, ownedByA, "replica-a"); err != nil {
		t.Fatal(err)
	}
	a.kill()
	killed := time.Now()
	go markAvailable(ctx, ns, ownedByA...)
	eventually(t, "replica-b to finish the syncs replica-a was running", func() (bool, string) {
		return allApps(t, names, func(app *v1alpha1.Application) bool {
			st := app.Status.OperationState
			return st != nil && st.Phase == v1alpha1.OperationSucceeded && app.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced &&
				app.Status.Health.Status == v1alpha1.HealthStatusHealthy && app.Annotations[application.AnnotationOperationReplica] == ""
		})
	})
	for _, name := range ownedByA {
		took := b.api.appliesTo("/namespaces/" + ns + "/configmaps/" + name + "-")
		if len(took) == 0 {
			t.Errorf("%s: replica-b never applied its ConfigMap", name)
			continue
		}
		if after := took[0].at.Sub(killed); after > leaseDuration+resync+3*time.Second {
			t.Errorf("%s: replica-b took it %s after replica-a died, want within the lease duration (%s) plus a resync (%s)", name, after, leaseDuration, resync)
		}
	}
	if !b.logged(`"msg":"Took over the operation of a replica that is gone"`) || !b.logged(`"replica":"replica-a"`) {
		t.Error("replica-b's log does not say it took over replica-a's operations")
	}
	// No object was applied by both replicas at once: every apply of
	// replica-b to an object replica-a applied came after replica-a's last.
	checkNoOverlap(t, a.api, b.api)
	t.Logf("replica-b owned %d of %d while both ran; it took over %d syncs from replica-a", len(ownedByB), appCount, len(ownedByA))

	// replica-a's Lease is collected; replica-b's is released when it
	// stops.
	eventually(t, "replica-a's Lease to be collected", func() (bool, string) {
		return leaseGone(t, "replica-a")
	})
	b.stop(t)
	if gone, why := leaseGone(t, "replica-b"); !gone {
		t.Errorf("replica-b's Lease after SIGTERM: %s", why)
	}
}

// repository creates a namespace, a Git repository with files(name) for
// every name, and an AppProject named after the namespace that permits
// them.
func repository(t *testing.T, names []string, files func(name string) map[string]string) (ns, repoURL string, git *gitserver.Server) {
	t.Helper()
	ns = env.Namespace(t)
	git = gitserver.New(t)
	repoURL = git.CreateRepo(t, "config", filesOf(names, files))
	testutil.Create(t, env.Client, &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: ns, Namespace: argoNS},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  []string{repoURL},
			Destinations: []v1alpha1.ApplicationDestination{{Server: inCluster, Namespace: ns}},
		},
	})
	return ns, repoURL, git
}

// applications creates an automated Application for each name, from
// apps/<name> of repoURL into ns, whose failed syncs are not retried.
func applications(t *testing.T, ns, repoURL string, names []string) {
	t.Helper()
	for _, name := range names {
		testutil.Create(t, env.Client, &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: argoNS},
			Spec: v1alpha1.ApplicationSpec{
				Project:     ns,
				Source:      &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: "apps/" + name, TargetRevision: gitserver.DefaultBranch},
				Destination: v1alpha1.ApplicationDestination{Server: inCluster, Namespace: ns},
				SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}, Retry: &v1alpha1.RetryStrategy{}},
			},
		})
	}
}

// inCluster is the in-cluster destination server.
const inCluster = "https://kubernetes.default.svc"

// checkRunningOn fails unless each Application's sync is Running on
// replica.
func checkRunningOn(t *testing.T, names []string, replica string) error {
	t.Helper()
	ok, why := allApps(t, names, func(app *v1alpha1.Application) bool {
		st := app.Status.OperationState
		return st != nil && st.Phase == v1alpha1.OperationRunning && app.Annotations[application.AnnotationOperationReplica] == replica
	})
	if !ok {
		return fmt.Errorf("syncs not Running on %s: %s", replica, why)
	}
	return nil
}

// checkNoOverlap fails when an object applied by both replicas was applied
// by the second before the first's last apply.
func checkNoOverlap(t *testing.T, first, second *apiProxy) {
	t.Helper()
	last := map[string]time.Time{}
	for _, ap := range first.appliesTo("/") {
		last[ap.path] = ap.at
	}
	for _, ap := range second.appliesTo("/") {
		if l, ok := last[ap.path]; ok && !ap.at.After(l) {
			t.Errorf("%s applied by both replicas at once: by the second at %s, by the first until %s", ap.path, ap.at.Format(time.StampMilli), l.Format(time.StampMilli))
		}
	}
}

// allApps reports whether cond holds for every named Application, with
// the state of those it does not hold for.
func allApps(t *testing.T, names []string, cond func(*v1alpha1.Application) bool) (bool, string) {
	t.Helper()
	var bad []string
	for _, name := range names {
		var app v1alpha1.Application
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: argoNS, Name: name}, &app); err != nil {
			bad = append(bad, name+": "+err.Error())
			continue
		}
		if !cond(&app) {
			bad = append(bad, describe(&app))
		}
	}
	return len(bad) == 0, strings.Join(bad, "; ")
}

func describe(app *v1alpha1.Application) string {
	var op string
	if st := app.Status.OperationState; st != nil {
		op = fmt.Sprintf("%s (%s)", st.Phase, st.Message)
	}
	return fmt.Sprintf("%s: sync %s, health %s, operation %s, replica %q", app.Name, app.Status.Sync.Status,
		app.Status.Health.Status, op, app.Annotations[application.AnnotationOperationReplica])
}

// waitMembers waits until every replica counts n members.
func waitMembers(t *testing.T, n int, rs ...*replica) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d shard members", n), func() (bool, string) {
		var seen []string
		for _, r := range rs {
			m := r.metric("tollgate_engine_shard_members")
			seen = append(seen, fmt.Sprintf("%s sees %v", r.name, m))
			if m != float64(n) {
				return false, strings.Join(seen, ", ")
			}
		}
		return true, ""
	})
}

// leaseGone reports whether member's shard Lease is gone.
func leaseGone(t *testing.T, member string) (bool, string) {
	var l coordinationv1.Lease
	err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: podNS, Name: "tollgate-shard-" + member}, &l)
	if apierrors.IsNotFound(err) {
		return true, ""
	}
	return false, fmt.Sprintf("Lease %s: %v (renewed %v)", member, err, l.Spec.RenewTime)
}
