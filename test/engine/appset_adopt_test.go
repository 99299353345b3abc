package engine_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// TestApplicationSetDoesNotAdoptAnotherProject: team-web's Application
// billing exists, synced, when team-a's ApplicationSet generates an
// Application of the same name for team-a. Argo CD would adopt it (and
// move it, with what it deployed, into team-a); tollgate leaves it as it
// is (spec, project, no owner reference), nothing of team-web's is pruned,
// and the ApplicationSet's conditions name the Application and both
// projects. The set's other Applications are still written, and an
// existing Application of team-a that no controller owns is adopted, as
// Argo CD adopts it.
func TestApplicationSetDoesNotAdoptAnotherProject(t *testing.T) {
	f := newFixture(t, map[string]string{
		"apps/billing/cm.yaml": configMap("billing-team-a", "1"),
		"apps/web/cm.yaml":     configMap("web-team-a", "1"),
		"team-web/cm.yaml":     configMap("invoices", "team-web"),
	})
	f.project() // team-a: the fixture's name
	teamWeb := f.name + "-team-web"
	f.create(&v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: teamWeb, Namespace: argoNS},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  f.repos,
			Destinations: []v1alpha1.ApplicationDestination{{Server: inCluster, Namespace: f.ns}},
		},
	})
	app := func(name, project, path string) *v1alpha1.Application {
		return &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: argoNS},
			Spec: v1alpha1.ApplicationSpec{
				Project:     project,
				Source:      &v1alpha1.ApplicationSource{RepoURL: f.repoURL, Path: path, TargetRevision: gitserver.DefaultBranch},
				Destination: v1alpha1.ApplicationDestination{Server: inCluster, Namespace: f.ns},
				SyncPolicy:  &v1alpha1.SyncPolicy{Automated: automated(true, false), Retry: &v1alpha1.RetryStrategy{}},
			},
		}
	}
	get := func(name string) (*v1alpha1.Application, error) {
		var a v1alpha1.Application
		err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: argoNS, Name: name}, &a)
		return &a, err
	}
	billingName, webName := f.name+"-billing", f.name+"-web"
	f.create(app(billingName, teamWeb, "team-web"))
	eventually(t, "team-web's billing synced", func() (bool, string) {
		a, err := get(billingName)
		if err != nil {
			return false, err.Error()
		}
		st := a.Status.OperationState
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && st != nil && st.Phase == v1alpha1.OperationSucceeded, describeApp(a)
	})
	before, err := get(billingName)
	if err != nil {
		t.Fatal(err)
	}
	// team-a's own Application web, which no controller owns yet.
	f.create(app(webName, f.name, "apps/web"))

	set := f.appSet(argoNS, gitDirectoriesSet)
	want := fmt.Sprintf("Application %q belongs to project %q; ApplicationSet %q generates it for project %q and does not adopt it",
		billingName, teamWeb, f.name, f.name)
	waitCondition(t, set, v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionStatusTrue,
		v1alpha1.ApplicationSetReasonApplicationValidationError, want)
	waitCondition(t, set, v1alpha1.ApplicationSetConditionResourcesUpToDate, v1alpha1.ApplicationSetConditionStatusFalse,
		v1alpha1.ApplicationSetReasonApplicationValidationError, want)
	apps := waitGenerated(t, argoNS, set, webName)
	if got := apps[webName].Spec.Source.Path; got != "apps/web" {
		t.Errorf("adopted web: path %q, want apps/web", got)
	}
	eventually(t, "team-a's web synced", func() (bool, string) {
		err := f.get(&corev1.ConfigMap{}, "web-team-a")
		return err == nil, fmt.Sprint(err)
	})
	consistently(t, "team-web's billing and what it deployed stay as they were", 5*time.Second, func() (bool, string) {
		a, err := get(billingName)
		if err != nil {
			return false, err.Error()
		}
		if !jsonEqual(before.Spec, a.Spec) || len(a.OwnerReferences) != 0 || !jsonEqual(before.Labels, a.Labels) || !jsonEqual(before.Finalizers, a.Finalizers) {
			return false, fmt.Sprintf("billing changed: spec %s, owners %v, labels %v, finalizers %v", jsonText(a.Spec), a.OwnerReferences, a.Labels, a.Finalizers)
		}
		if err := f.get(&corev1.ConfigMap{}, "invoices"); err != nil {
			return false, "team-web's ConfigMap: " + err.Error()
		}
		if gone, why := f.gone(&corev1.ConfigMap{}, "billing-team-a"); !gone {
			return false, "team-a's billing applied: " + why
		}
		return true, ""
	})
}
