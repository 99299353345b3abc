package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/authority"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/server"
	"github.com/tollgate-dev/tollgate/reposerver/source"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// diffEvaluator is the evaluator of the diffs of this package's tests,
// with the policy configuration of the engine under test's namespace,
// compiled once.
var diffEvaluator = sync.OnceValues(func() (*policies.Evaluator, error) {
	popts := policies.DefaultOptions()
	popts.Config.ArgoCDNamespace = argoNS
	return policies.New(context.Background(), popts)
})

// diffRepoService fetches (http allowed) and renders in process, as
// `tollgate app diff` does.
func diffRepoService(t *testing.T) *server.Service {
	t.Helper()
	sopts := source.DefaultOptions()
	sopts.AllowInsecure = true
	sources, err := source.NewCache(t.TempDir(), sopts)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := server.New(sources, server.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// diffDependencies are application.Diff's as `tollgate app diff` passes them,
// as the administrator, rendering with svc.
func diffDependencies(t *testing.T, svc reposerver.Generator) application.DiffDependencies {
	t.Helper()
	eval, err := diffEvaluator()
	if err != nil {
		t.Fatal(err)
	}
	return application.DiffDependencies{Client: env.Client, Config: env.Config, Scheme: env.Client.Scheme(), Manifests: svc, Evaluator: eval}
}

// otherURL is host (https://127.0.0.1:PORT/) under another name that the
// control plane's serving certificate holds, without a trailing slash: a
// second URL of the same API server, as a registered cluster.
func otherURL(t *testing.T, host string) string {
	t.Helper()
	host = strings.TrimRight(host, "/")
	switch {
	case strings.Contains(host, "127.0.0.1"):
		return strings.Replace(host, "127.0.0.1", "localhost", 1)
	case strings.Contains(host, "localhost"):
		return strings.Replace(host, "localhost", "127.0.0.1", 1)
	}
	t.Fatalf("no second name for the API server %s", host)
	return ""
}

// TestAppDiffProject: a diff reads live objects only within the
// Application's project, as a sync writes them, whatever credentials reach
// the destination: here a registered cluster (this control plane under a
// second URL, with the administrator's certificate, so any read would
// succeed). An object rendered into a namespace the project does not
// permit, a live object of another namespace carrying the Application's
// tracking id (a prune candidate) and a cluster the project's
// permitOnlyProjectScopedClusters excludes each refuse the whole diff with
// a message naming the object and rule, and the other team's live value
// is in neither the diff nor the message; within the project the diff is
// shown, the live object included.
func TestAppDiffProject(t *testing.T) {
	t.Parallel()
	const value = "team-b-only-5e1f"
	other := env.Namespace(t)
	files := map[string]string{
		"permitted/own.yaml": configMap("own", "desired"),
		"refused/own.yaml":   configMap("own", "desired"),
		"refused/victim.yaml": fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: victim
  namespace: %s
data:
  key: rendered
`, other),
	}
	f := newFixture(t, files)
	remote := otherURL(t, env.Config.Host)
	cluster := "remote-" + f.name
	f.clusterSecret(map[string]string{"name": cluster, "server": remote})
	scoped := f.name + "-scoped"
	for _, name := range []string{f.name, scoped} {
		f.create(&v1alpha1.AppProject{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: argoNS},
			Spec: v1alpha1.AppProjectSpec{
				SourceRepos:                     f.repos,
				Destinations:                    []v1alpha1.ApplicationDestination{{Server: remote, Namespace: f.ns}},
				PermitOnlyProjectScopedClusters: name == scoped,
			},
		})
	}
	// The live objects: the project's own, and another team's, one of
	// which claims to be the "forged" Application's.
	forgedApp := f.name + "-forged"
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "own", Namespace: f.ns}, Data: map[string]string{"key": "live"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "victim", Namespace: other}, Data: map[string]string{"key": value}},
		{ObjectMeta: metav1.ObjectMeta{Name: "forged", Namespace: other, Annotations: map[string]string{
			v1alpha1.AnnotationKeyTrackingID: fmt.Sprintf("%s:/ConfigMap:%s/forged", forgedApp, other),
		}}, Data: map[string]string{"key": value}},
	} {
		f.create(cm)
	}
	denied := func(app, name string) string {
		return fmt.Sprintf(`[project-destination-denied] ConfigMap/%s/%s: ConfigMap %q of Application %q has destination (server %q, namespace %q), which AppProject %q does not permit; deploy it into a namespace the project's spec.destinations list or add this one there`,
			other, name, name, app, remote, other, f.name)
	}
	refused := func(project string, lines ...string) string {
		return fmt.Sprintf("diff refused: AppProject %q does not permit it, no live object is shown:\n%s", project, strings.Join(lines, "\n"))
	}
	svc := diffRepoService(t)
	opts := application.DefaultOptions()
	opts.Namespace = argoNS
	for _, tc := range []struct {
		name, app, project, path string
		// want is the refusal; "" when the diff is shown.
		want string
	}{
		{name: "within the project", app: f.name + "-permitted", project: f.name, path: "permitted"},
		{name: "rendered outside the project", app: f.name + "-outside", project: f.name, path: "refused",
			want: refused(f.name, denied(f.name+"-outside", "victim"))},
		{name: "forged tracking id", app: forgedApp, project: f.name, path: "permitted",
			want: refused(f.name, denied(forgedApp, "forged"))},
		{name: "cluster of no project", app: f.name + "-unscoped", project: scoped, path: "permitted",
			want: refused(scoped, fmt.Sprintf(`[project-destination-denied] Application/%s/%s: application destination server '%s' and namespace '%s' do not match any of the allowed destinations in project '%s'`,
				argoNS, f.name+"-unscoped", remote, f.ns, scoped))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := &v1alpha1.Application{
				ObjectMeta: metav1.ObjectMeta{Name: tc.app, Namespace: argoNS},
				Spec: v1alpha1.ApplicationSpec{
					Project:     tc.project,
					Source:      &v1alpha1.ApplicationSource{RepoURL: f.repoURL, Path: tc.path, TargetRevision: gitserver.DefaultBranch},
					Destination: v1alpha1.ApplicationDestination{Server: remote, Namespace: f.ns},
				},
			}
			d, err := application.Diff(t.Context(), diffDependencies(t, svc), opts, app)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("diff: %v", err)
				}
				if diff := cmp.Diff([]string{"/ConfigMap own"}, names(d.Objects)); diff != "" {
					t.Errorf("objects (-want +got):\n%s", diff)
				}
				if got, _ := d.Objects[0].Live["data"].(map[string]any); got["key"] != "live" {
					t.Errorf("live data %v, want the live object's", got)
				}
			} else {
				var r *authority.RefusedError
				if !errors.As(err, &r) || d != nil {
					t.Fatalf("diff = %v, %v; want a refusal", d, err)
				}
				if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
					t.Errorf("refusal (-want +got):\n%s", diff)
				}
			}
			out, _ := json.Marshal(d)
			if strings.Contains(string(out), value) || err != nil && strings.Contains(err.Error(), value) {
				t.Errorf("the diff shows the other team's value %q", value)
			}
		})
	}
}
