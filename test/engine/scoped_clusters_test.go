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

// TestProjectScopedClusters: a project with permitOnlyProjectScopedClusters
// deploys only to the clusters whose cluster Secret names it (key
// project), as Argo CD's IsDestinationPermitted. An Application to the
// project's own cluster (this control plane, registered by a Secret) syncs;
// one to the in-cluster destination, or to a cluster of another project,
// is an InvalidSpecError with Argo CD's message, and nothing of it is
// applied.
func TestProjectScopedClusters(t *testing.T) {
	t.Parallel()
	files := baseFiles()
	files["refused/cm.yaml"] = configMap("refused", "1")
	f := newFixture(t, files)
	clusterSecret := func(name, server, project string) {
		f.clusterSecret(map[string]string{"name": name, "server": server, "project": project})
	}
	own, other := "scoped-"+f.name, "other-"+f.name
	clusterSecret(own, env.Config.Host, f.name)
	// Another project's cluster, at another URL of this control plane: a
	// project's cluster is also one with its server URL.
	clusterSecret(other, env.Config.Host+"/other", f.name+"-other")

	f.editProject = func(p *v1alpha1.AppProject) {
		p.Spec.PermitOnlyProjectScopedClusters = true
		p.Spec.Destinations = []v1alpha1.ApplicationDestination{{Server: "*", Namespace: f.ns}, {Name: "*", Namespace: f.ns}}
	}
	f.application(automated(true, false), func(a *v1alpha1.Application) {
		a.Spec.Destination = v1alpha1.ApplicationDestination{Name: own, Namespace: f.ns}
	})
	f.waitSynced(f.head)

	refused := func(suffix string, dest v1alpha1.ApplicationDestination) string {
		dest.Namespace = f.ns
		name := f.name + "-" + suffix
		f.create(&v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: argoNS},
			Spec: v1alpha1.ApplicationSpec{
				Project:     f.name,
				Source:      &v1alpha1.ApplicationSource{RepoURL: f.repoURL, Path: "refused", TargetRevision: gitserver.DefaultBranch},
				Destination: dest,
				SyncPolicy:  &v1alpha1.SyncPolicy{Automated: automated(true, false), Retry: &v1alpha1.RetryStrategy{}},
			},
		})
		return name
	}
	for _, tc := range []struct {
		suffix string
		dest   v1alpha1.ApplicationDestination
		shown  string
	}{
		{"in-cluster", v1alpha1.ApplicationDestination{Server: inCluster}, inCluster},
		{"other-by-name", v1alpha1.ApplicationDestination{Name: other}, other},
		{"other-by-server", v1alpha1.ApplicationDestination{Server: env.Config.Host + "/other"}, env.Config.Host + "/other"},
	} {
		name := refused(tc.suffix, tc.dest)
		want := fmt.Sprintf("application destination server '%s' and namespace '%s' do not match any of the allowed destinations in project '%s'", tc.shown, f.ns, f.name)
		eventually(t, name+" refused with Argo CD's message", func() (bool, string) {
			var a v1alpha1.Application
			if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: argoNS, Name: name}, &a); err != nil {
				return false, err.Error()
			}
			msg, _ := condition(&a, v1alpha1.ApplicationConditionInvalidSpecError)
			return msg == want, fmt.Sprintf("want %q; %s", want, describeApp(&a))
		})
	}
	consistently(t, "nothing of the refused Applications is applied", 3*time.Second, func() (bool, string) {
		return f.gone(&corev1.ConfigMap{}, "refused")
	})
}
