package engine_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/chartserver"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// chartArchive packages a chart whose template is a ConfigMap named name
// with the chart's version and the value tier.
func chartArchive(t *testing.T, chart, version, name string) []byte {
	t.Helper()
	data, err := chartserver.Package(chart, version, map[string]string{
		"values.yaml":       "tier: default\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  chart: {{ .Chart.Version | quote }}\n  tier: {{ .Values.tier | quote }}\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestHelmRepositoryChartWithValuesFromGit syncs a chart from a Helm
// repository behind basic auth (credentials from a repository Secret of
// type helm) at a version constraint, with a value file from a Git ref
// source, as most third-party software is installed with Argo CD; then a
// new version whose index digest does not match its archive is refused and
// the synced version stays.
func TestHelmRepositoryChartWithValuesFromGit(t *testing.T) {
	repo := chartserver.NewRepo("reader", "s3cret")
	defer repo.Close()
	for _, v := range []string{"1.0.0", "1.0.1"} {
		repo.Add("web", v, chartArchive(t, "web", v, "settings"), "")
	}
	f := newFixture(t, map[string]string{"envs/prod.yaml": "tier: prod\n"})
	f.repos = append(f.repos, repo.URL)
	f.create(repositorySecret(argoNS, f.name+"-charts", map[string]string{
		"type": "helm", "url": repo.URL, "username": "reader", "password": "s3cret", "insecure": "true",
	}))
	f.application(&v1alpha1.SyncPolicyAutomated{}, func(a *v1alpha1.Application) {
		a.Spec.Source = nil
		a.Spec.Sources = []v1alpha1.ApplicationSource{
			{RepoURL: repo.URL, Chart: "web", TargetRevision: "1.0.*", Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"$values/envs/prod.yaml"}}},
			{RepoURL: f.repoURL, TargetRevision: gitserver.DefaultBranch, Ref: "values"},
		}
	})
	f.waitApp("synced at chart 1.0.1 and the values commit", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && strings.Join(a.Status.Sync.Revisions, ",") == "1.0.1,"+f.head &&
			st != nil && st.Phase == v1alpha1.OperationSucceeded
	})
	var cm corev1.ConfigMap
	if err := f.get(&cm, "settings"); err != nil {
		t.Fatal(err)
	}
	if cm.Data["chart"] != "1.0.1" || cm.Data["tier"] != "prod" {
		t.Errorf("data = %v, want chart 1.0.1 with tier prod from Git", cm.Data)
	}

	repo.Add("web", "1.0.2", chartArchive(t, "web", "1.0.2", "settings"), strings.Repeat("0", 64))
	f.refresh()
	f.waitApp("refusing chart 1.0.2", func(a *v1alpha1.Application) bool {
		msg, _ := condition(a, v1alpha1.ApplicationConditionComparisonError)
		return strings.Contains(msg, "chart web-1.0.2") && strings.Contains(msg, "digest mismatch")
	})
	if err := f.get(&cm, "settings"); err != nil || cm.Data["chart"] != "1.0.1" {
		t.Errorf("after the refused version: %v, data %v; want chart 1.0.1 left as it was", err, cm.Data)
	}
}

// TestChartDependencyFromOCI syncs a chart in Git whose dependency is not
// vendored: it is pulled from an OCI registry with the credentials of a
// repo-creds Secret of type helm with enableOCI, as `helm dependency build`
// would before `helm template`. The project permits the registry as Argo
// CD projects name one, without oci://.
func TestChartDependencyFromOCI(t *testing.T) {
	reg := chartserver.NewRegistry("puller", "pw")
	defer reg.Close()
	if err := reg.Push("charts", "cache", "2.1.0", chartArchive(t, "cache", "2.1.0", "cache")); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, map[string]string{
		"manifests/Chart.yaml":        "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- {name: cache, version: 2.x, repository: \"" + reg.URL + "/charts\"}\n",
		"manifests/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n",
	})
	creds := repositorySecret(argoNS, f.name+"-registry", map[string]string{
		"type": "helm", "enableOCI": "true", "url": reg.Host, "username": "puller", "password": "pw", "insecure": "true",
	})
	creds.Labels["argocd.argoproj.io/secret-type"] = "repo-creds"
	f.create(creds)
	f.repos = append(f.repos, reg.Host+"/charts")
	f.application(&v1alpha1.SyncPolicyAutomated{}, nil)
	f.waitSynced(f.head)
	var cm corev1.ConfigMap
	if err := f.get(&cm, "cache"); err != nil || cm.Data["chart"] != "2.1.0" {
		t.Errorf("the dependency's ConfigMap: %v, data %v; want chart 2.1.0", err, cm.Data)
	}
}

// TestChartDependencyNotPermitted renders a chart from a Git repository
// the project permits whose dependency comes from a Helm repository the
// project's sourceRepos do not list, though a repository Secret holds its
// credentials: the render is refused with a ComparisonError naming the
// dependency, the repository and the project, and the Helm repository
// receives no request at all.
func TestChartDependencyNotPermitted(t *testing.T) {
	repo := chartserver.NewRepo("reader", "s3cret")
	defer repo.Close()
	repo.Add("common", "1.0.0", chartArchive(t, "common", "1.0.0", "common"), "")
	f := newFixture(t, map[string]string{
		"manifests/Chart.yaml":        "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- {name: common, version: 1.x, repository: \"" + repo.URL + "\"}\n",
		"manifests/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n",
	})
	f.create(repositorySecret(argoNS, f.name+"-charts", map[string]string{
		"type": "helm", "url": repo.URL, "username": "reader", "password": "s3cret", "insecure": "true",
	}))
	f.application(&v1alpha1.SyncPolicyAutomated{}, nil)
	want := `spec.source: manifests/Chart.yaml: dependency common: repository ` + repo.URL + ` is not permitted in project "` + f.name +
		`": add it to the project's spec.sourceRepos, or vendor the chart in charts/`
	a := f.waitApp("refusing the dependency", func(a *v1alpha1.Application) bool {
		msg, _ := condition(a, v1alpha1.ApplicationConditionComparisonError)
		return strings.Contains(msg, want)
	})
	if a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced {
		t.Errorf("sync status = %s, want not synced", a.Status.Sync.Status)
	}
	var cm corev1.ConfigMap
	if err := f.get(&cm, "settings"); err == nil {
		t.Error("the chart's ConfigMap exists: the chart was rendered and synced")
	}
	if n := repo.Requests(); n != 0 {
		t.Errorf("the Helm repository received %d requests, want none", n)
	}
}

// TestOCIChartSource syncs a chart from an OCI registry named as Argo CD
// users name it, without the oci:// scheme, marked OCI by its repository
// Secret (type helm, enableOCI), which also holds the credentials.
func TestOCIChartSource(t *testing.T) {
	reg := chartserver.NewRegistry("puller", "pw")
	defer reg.Close()
	for _, v := range []string{"3.0.0", "3.1.0"} {
		if err := reg.Push("charts", "api", v, chartArchive(t, "api", v, "settings")); err != nil {
			t.Fatal(err)
		}
	}
	f := newFixture(t, nil)
	repoURL := reg.Host + "/charts"
	f.repos = append(f.repos, repoURL)
	f.create(repositorySecret(argoNS, f.name+"-registry", map[string]string{
		"type": "helm", "enableOCI": "true", "url": repoURL, "username": "puller", "password": "pw", "insecure": "true",
	}))
	f.application(&v1alpha1.SyncPolicyAutomated{}, func(a *v1alpha1.Application) {
		a.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: repoURL, Chart: "api", TargetRevision: "~3.0"}
	})
	f.waitSynced("3.0.0")
	var cm corev1.ConfigMap
	if err := f.get(&cm, "settings"); err != nil || cm.Data["chart"] != "3.0.0" {
		t.Errorf("the chart's ConfigMap: %v, data %v; want chart 3.0.0", err, cm.Data)
	}
}
