package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/check"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// appSet creates the ApplicationSet of manifest (YAML, with %[1]s the
// fixture's name, %[2]s its namespace, %[3]s its repository URL and %[4]s
// the default branch) in namespace ns, and returns it.
func (f *fixture) appSet(ns, manifest string) *v1alpha1.ApplicationSet {
	f.t.Helper()
	return f.appSetNamed(ns, f.name, manifest)
}

// appSetNamed is appSet with the ApplicationSet's name.
func (f *fixture) appSetNamed(ns, name, manifest string) *v1alpha1.ApplicationSet {
	f.t.Helper()
	set := &v1alpha1.ApplicationSet{}
	if err := yaml.UnmarshalStrict([]byte(f.expand(manifest)), set); err != nil {
		f.t.Fatalf("decode applicationset: %v", err)
	}
	set.Name, set.Namespace = name, ns
	// Without a garbage collector in the test's control plane, the
	// generated Applications are deleted here, after the ApplicationSet.
	f.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var apps v1alpha1.ApplicationList
		_ = env.Client.List(ctx, &apps, client.InNamespace(ns))
		for i := range apps.Items {
			if ref := metav1.GetControllerOf(&apps.Items[i]); ref != nil && ref.UID == set.UID {
				_ = env.Client.Patch(ctx, &apps.Items[i], client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
				_ = env.Client.Delete(ctx, &apps.Items[i])
			}
		}
	})
	f.create(set)
	return set
}

// expand fills the fixture's values into a manifest template (see appSet).
func (f *fixture) expand(manifest string) string {
	return fmt.Sprintf(manifest, f.name, f.ns, f.repoURL, gitserver.DefaultBranch)
}

// generated lists the Applications of namespace ns whose controller is the
// ApplicationSet set, by name.
func generated(t *testing.T, ns string, set *v1alpha1.ApplicationSet) map[string]*v1alpha1.Application {
	t.Helper()
	var apps v1alpha1.ApplicationList
	if err := env.Client.List(t.Context(), &apps, client.InNamespace(ns)); err != nil {
		t.Fatalf("list applications: %v", err)
	}
	out := map[string]*v1alpha1.Application{}
	for i := range apps.Items {
		if ref := metav1.GetControllerOf(&apps.Items[i]); ref != nil && ref.UID == set.UID {
			out[apps.Items[i].Name] = &apps.Items[i]
		}
	}
	return out
}

// waitGenerated waits until set owns exactly the Applications names.
func waitGenerated(t *testing.T, ns string, set *v1alpha1.ApplicationSet, names ...string) map[string]*v1alpha1.Application {
	t.Helper()
	var apps map[string]*v1alpha1.Application
	slices.Sort(names)
	eventually(t, fmt.Sprintf("applicationset %s generates %v", set.Name, names), func() (bool, string) {
		apps = generated(t, ns, set)
		var got []string
		for n := range apps {
			got = append(got, n)
		}
		slices.Sort(got)
		return slices.Equal(got, names), fmt.Sprintf("generated %v; %s", got, describeSet(t, set))
	})
	return apps
}

// waitCondition waits until set's condition of type typ has status and
// a message containing every one of msgs, and returns the ApplicationSet.
func waitCondition(t *testing.T, set *v1alpha1.ApplicationSet, typ v1alpha1.ApplicationSetConditionType, status v1alpha1.ApplicationSetConditionStatus, reason string, msgs ...string) *v1alpha1.ApplicationSet {
	t.Helper()
	var live v1alpha1.ApplicationSet
	eventually(t, fmt.Sprintf("applicationset %s condition %s=%s (%s) %q", set.Name, typ, status, reason, msgs), func() (bool, string) {
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(set), &live); err != nil {
			return false, err.Error()
		}
		for _, c := range live.Status.Conditions {
			if c.Type != typ || c.Status != status || c.Reason != reason {
				continue
			}
			for _, m := range msgs {
				if !strings.Contains(c.Message, m) {
					return false, describeSet(t, &live)
				}
			}
			return true, ""
		}
		return false, describeSet(t, &live)
	})
	return &live
}

// describeSet summarizes an ApplicationSet's status for failure messages.
func describeSet(t *testing.T, set *v1alpha1.ApplicationSet) string {
	var live v1alpha1.ApplicationSet
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(set), &live); err != nil {
		return err.Error()
	}
	b, _ := json.Marshal(live.Status)
	return string(b)
}

// gitDirectoriesSet generates one automated Application per directory
// under apps/ of the fixture's repository.
const gitDirectoriesSet = `
spec:
  generators:
  - git:
      repoURL: %[3]s
      revision: %[4]s
      directories:
      - path: apps/*
      - path: apps/skipped
        exclude: true
  template:
    metadata:
      name: '%[1]s-{{path.basename}}'
      labels:
        team: '{{path.basename}}'
    spec:
      project: %[1]s
      source:
        repoURL: %[3]s
        targetRevision: %[4]s
        path: '{{path}}'
      destination:
        server: https://kubernetes.default.svc
        namespace: %[2]s
      syncPolicy:
        automated: {prune: true}
`

// TestApplicationSetGitDirectories: an ApplicationSet with a git
// directories generator creates one Application per directory, owned by
// it with the resources finalizer, which the engine then syncs; the
// ApplicationSet reports Argo CD's conditions and its Applications in
// status.resources. A push that adds a directory (through the Git push
// webhook) creates its Application within seconds, and one that removes a
// directory deletes its Application. Applications generated by the same
// inputs are the same as `tollgate test` and `tollgate appset generate`
// generate from the checkout (the differential test).
func TestApplicationSetGitDirectories(t *testing.T) {
	files := map[string]string{
		"apps/alpha/cm.yaml":   configMap("alpha", "1"),
		"apps/beta/cm.yaml":    configMap("beta", "1"),
		"apps/skipped/cm.yaml": configMap("skipped", "1"),
	}
	f := newFixture(t, files)
	f.project()
	set := f.appSet(argoNS, gitDirectoriesSet)
	apps := waitGenerated(t, argoNS, set, f.name+"-alpha", f.name+"-beta")
	alpha := apps[f.name+"-alpha"]
	ref := metav1.GetControllerOf(alpha)
	if ref.Kind != v1alpha1.ApplicationSetKind || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("owner reference %+v, want the ApplicationSet as controller, blocking owner deletion", ref)
	}
	if !slices.Contains(alpha.Finalizers, v1alpha1.ResourcesFinalizerName) || alpha.Labels["team"] != "alpha" || alpha.Spec.Source.Path != "apps/alpha" {
		t.Errorf("generated application: finalizers %v, labels %v, path %q", alpha.Finalizers, alpha.Labels, alpha.Spec.Source.Path)
	}
	for _, name := range []string{"alpha", "beta"} {
		eventually(t, "configmap "+name+" synced", func() (bool, string) {
			err := f.get(&corev1.ConfigMap{}, name)
			return err == nil, fmt.Sprint(err)
		})
	}
	live := waitCondition(t, set, v1alpha1.ApplicationSetConditionResourcesUpToDate, v1alpha1.ApplicationSetConditionStatusTrue,
		v1alpha1.ApplicationSetReasonApplicationSetUpToDate, "ApplicationSet up to date")
	waitCondition(t, set, v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionStatusFalse, v1alpha1.ApplicationSetReasonApplicationSetUpToDate)
	waitCondition(t, set, v1alpha1.ApplicationSetConditionParametersGenerated, v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetReasonParametersGenerated)
	eventually(t, "status.resources lists both Applications Synced and Healthy", func() (bool, string) {
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(set), live); err != nil {
			return false, err.Error()
		}
		ok := len(live.Status.Resources) == 2 && live.Status.ResourcesCount == 2
		for _, r := range live.Status.Resources {
			ok = ok && r.Kind == v1alpha1.ApplicationKind && r.Group == v1alpha1.Group && r.Status == v1alpha1.SyncStatusCodeSynced &&
				r.Health != nil && r.Health.Status == v1alpha1.HealthStatusHealthy
		}
		b, _ := json.Marshal(live.Status.Resources)
		return ok, string(b)
	})

	// The differential test: the CLI generates the same Applications from
	// a checkout of the same commit.
	checkout := t.TempDir()
	for p, content := range files {
		writeFile(t, filepath.Join(checkout, p), content)
	}
	setFile := filepath.Join(t.TempDir(), "appset.yaml")
	writeFile(t, setFile, "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: "+f.name+"\n  namespace: "+argoNS+"\n"+f.expand(gitDirectoriesSet))
	sets, err := check.GenerateApplicationSets(t.Context(), setFile, check.AppSetOptions{RepoRoot: checkout, RepoURL: f.repoURL})
	if err != nil {
		t.Fatalf("generate with the CLI: %v", err)
	}
	apps = generated(t, argoNS, set)
	if len(sets) != 1 || len(sets[0].Applications) != len(apps) {
		t.Fatalf("the CLI generates %d sets, the controller %d Applications", len(sets), len(apps))
	}
	for _, g := range sets[0].Applications {
		var cli v1alpha1.Application
		b, _ := json.Marshal(g.Application)
		if err := json.Unmarshal(b, &cli); err != nil {
			t.Fatal(err)
		}
		live, ok := apps[cli.Name]
		switch {
		case !ok:
			t.Errorf("the CLI generates %s, the controller does not", cli.Name)
		case !jsonEqual(cli.Spec, live.Spec) || !jsonEqual(cli.Labels, live.Labels) || !jsonEqual(cli.Finalizers, live.Finalizers) || cli.Namespace != live.Namespace:
			t.Errorf("%s differs:\nCLI        %s\ncontroller %s", cli.Name, jsonText(cli.Spec), jsonText(live.Spec))
		}
	}

	// A pushed directory is generated within seconds of the webhook call.
	sha := f.git.CommitOn(t, f.repo, gitserver.DefaultBranch, map[string]string{"apps/gamma/cm.yaml": configMap("gamma", "1")}, nil, "add gamma")
	if a := f.notifyPush(sha); !slices.Contains(a.RefreshedApplicationSets, argoNS+"/"+f.name) {
		t.Fatalf("push webhook refreshed ApplicationSets %v, want %s/%s", a.RefreshedApplicationSets, argoNS, f.name)
	}
	start := time.Now()
	waitGenerated(t, argoNS, set, f.name+"-alpha", f.name+"-beta", f.name+"-gamma")
	t.Logf("pushed directory generated in %s", time.Since(start).Round(time.Millisecond))
	eventually(t, "refresh annotation removed", func() (bool, string) {
		var s v1alpha1.ApplicationSet
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(set), &s); err != nil {
			return false, err.Error()
		}
		return s.Annotations[v1alpha1.AnnotationApplicationSetRefresh] == "", fmt.Sprint(s.Annotations)
	})

	// A removed directory's Application is deleted (policy sync), and its
	// resources finalizer deletes what it synced.
	sha = f.git.CommitOn(t, f.repo, gitserver.DefaultBranch, nil, []string{"apps/beta/cm.yaml"}, "remove beta")
	f.notifyPush(sha)
	waitGenerated(t, argoNS, set, f.name+"-alpha", f.name+"-gamma")
	eventually(t, "configmap beta deleted with its Application", func() (bool, string) {
		err := f.get(&corev1.ConfigMap{}, "beta")
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// listSet generates an Application per element of a list, with the
// destination namespace and the repository path from the element.
const listSet = `
spec:
  goTemplate: true
  goTemplateOptions: [missingkey=error]
  generators:
  - list:
      elements: %[5]s
  template:
    metadata:
      name: '%[1]s-{{.name}}'
    spec:
      project: '{{.project}}'
      source:
        repoURL: '{{.repo}}'
        targetRevision: %[4]s
        path: apps/alpha
      destination:
        server: https://kubernetes.default.svc
        namespace: '{{.namespace}}'
`

// listElements renders list elements for listSet.
func listElements(elems ...map[string]string) string {
	b, _ := json.Marshal(elems)
	return string(b)
}

// TestApplicationSetGate: every generated Application goes through the
// policies before it is written. An element that sends its Application
// into the argocd namespace, to a repository its project does not permit,
// to another project, or that carries tollgate's operation fence, is not
// written; the ApplicationSet's conditions name the rule, the parameters
// and the message; the permitted ones are written; and an Application
// whose parameters change into a denied one keeps its earlier version.
func TestApplicationSetGate(t *testing.T) {
	f := newFixture(t, map[string]string{"apps/alpha/cm.yaml": configMap("alpha", "1")})
	f.project()
	ok := map[string]string{"name": "ok", "project": f.name, "repo": f.repoURL, "namespace": f.ns}
	elems := []map[string]string{
		ok,
		{"name": "argocd", "project": f.name, "repo": f.repoURL, "namespace": "argocd"},
		{"name": "repo", "project": f.name, "repo": "https://github.com/attacker/charts.git", "namespace": f.ns},
		{"name": "noproject", "project": "no-such-project", "repo": f.repoURL, "namespace": f.ns},
	}
	manifest := strings.Replace(listSet, "%[5]s", listElements(elems...), 1)
	set := f.appSet(argoNS, manifest)
	waitGenerated(t, argoNS, set, f.name+"-ok")
	waitCondition(t, set, v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetReasonPolicyViolation,
		"Application "+f.name+"-argocd from spec.generators[0] with parameters", `"namespace":"argocd"`, "[no-argocd-destination]",
		"Application "+f.name+"-repo from spec.generators[0]", "[project-source-denied]",
		"application references project no-such-project which does not exist")
	waitCondition(t, set, v1alpha1.ApplicationSetConditionResourcesUpToDate, v1alpha1.ApplicationSetConditionStatusFalse, v1alpha1.ApplicationSetReasonPolicyViolation)
	for _, name := range []string{"argocd", "repo", "noproject"} {
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: argoNS, Name: f.name + "-" + name}, &v1alpha1.Application{}); err == nil {
			t.Errorf("application %s-%s was written", f.name, name)
		}
	}

	// The permitted element changes into a denied one: its Application is
	// left as it was, and not deleted.
	denied := map[string]string{"name": "ok", "project": f.name, "repo": f.repoURL, "namespace": "kube-system"}
	edit(t, set.DeepCopy(), func(live *v1alpha1.ApplicationSet) {
		live.Spec.Generators[0].List.Elements = nil
		if err := json.Unmarshal([]byte(listElements(denied)), &live.Spec.Generators[0].List.Elements); err != nil {
			t.Fatal(err)
		}
	})
	waitCondition(t, set, v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetReasonPolicyViolation,
		"Application "+f.name+"-ok", `"namespace":"kube-system"`)
	consistently(t, "the denied update is not written", 3*time.Second, func() (bool, string) {
		apps := generated(t, argoNS, set)
		app, found := apps[f.name+"-ok"]
		if !found {
			return false, "application deleted"
		}
		return app.Spec.Destination.Namespace == f.ns, "destination namespace " + app.Spec.Destination.Namespace
	})
}

// TestApplicationSetBypassDenied: what a tenant controls (the ApplicationSet
// in its own namespace, the files a git files generator reads from its
// repository) cannot write an Application the policies deny, nor one in a
// namespace whose ApplicationSets are not run.
func TestApplicationSetBypassDenied(t *testing.T) {
	f := newFixture(t, map[string]string{
		// The tenant's parameters files ask for the argocd namespace, one
		// outside the project, a project that does not permit the
		// destination (PROJECT is the fixture's name, which the template
		// fills in), and a path out of the repository; the template sets
		// the operation fence.
		"teams/red/config.json":   `{"team": "red", "namespace": "argocd"}`,
		"teams/blue/config.json":  `{"team": "blue", "namespace": "kube-system"}`,
		"teams/green/config.json": `{"team": "green", "project": "PROJECT-other"}`,
		"teams/black/config.json": `{"team": "black", "dir": "../../../../../etc"}`,
		"apps/alpha/cm.yaml":      configMap("alpha", "1"),
	})
	f.project()
	other := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: f.name + "-other", Namespace: argoNS},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  []string{f.repoURL},
			Destinations: []v1alpha1.ApplicationDestination{{Server: inCluster, Namespace: "somewhere-else"}},
		},
	}
	f.create(other)
	filesSet := `
spec:
  goTemplate: true
  generators:
  - git:
      repoURL: %[3]s
      revision: %[4]s
      files:
      - path: teams/*/config.json
  template:
    metadata:
      name: '%[1]s-{{.team}}'
      annotations:
        tollgate.dev/operation-replica: '{{.team}}'
    spec:
      project: '{{ default "%[1]s" .project | replace "PROJECT" "%[1]s" }}'
      source:
        repoURL: %[3]s
        targetRevision: %[4]s
        path: 'apps/{{ default "alpha" .dir }}'
      destination:
        server: https://kubernetes.default.svc
        namespace: '{{ default "%[2]s" .namespace }}'
`
	set := f.appSet(argoNS, filesSet)
	// The denials name the files the parameters came from, never quote
	// what the files hold.
	live := waitCondition(t, set, v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetReasonPolicyViolation,
		"Application "+f.name+"-red ", "[no-argocd-destination]", "with parameters read from teams/red/config.json of "+f.repoURL+" (content not quoted)",
		"Application "+f.name+"-blue ", "[project-destination-denied]", "with parameters read from teams/blue/config.json of "+f.repoURL,
		"Application "+f.name+"-green ", `AppProject "`+f.name+`-other"`,
		"Application "+f.name+"-black ", "[source-path-outside-repo]", "../../../../../etc",
		"[reserved-annotation]")
	for _, c := range live.Status.Conditions {
		if strings.Contains(c.Message, `"team":"red"`) || strings.Contains(c.Message, `"dir":`) {
			t.Errorf("condition %s quotes the parameters files: %s", c.Type, c.Message)
		}
	}
	if apps := generated(t, argoNS, set); len(apps) != 0 {
		t.Errorf("applications written: %v", apps)
	}

	// An ApplicationSet in appSetNS generates into appSetNS, which the
	// project does not list in sourceNamespaces: denied (app-namespace).
	listed := strings.Replace(listSet, "%[5]s", listElements(map[string]string{"name": "ok", "project": f.name, "repo": f.repoURL, "namespace": f.ns}), 1)
	tenant := f.appSet(appSetNS, listed)
	waitCondition(t, tenant, v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetReasonPolicyViolation,
		"[app-namespace]")
	if apps := generated(t, appSetNS, tenant); len(apps) != 0 {
		t.Errorf("applications written in %s: %v", appSetNS, apps)
	}

	// An ApplicationSet in a namespace not listed is not run at all.
	unlisted := f.appSet(f.ns, listed)
	consistently(t, "the ApplicationSet of an unlisted namespace is not run", 3*time.Second, func() (bool, string) {
		var s v1alpha1.ApplicationSet
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(unlisted), &s); err != nil {
			return false, err.Error()
		}
		apps := generated(t, f.ns, unlisted)
		return len(s.Status.Conditions) == 0 && len(apps) == 0, describeSet(t, unlisted)
	})
}

// TestApplicationSetMatrixOfGitFilesAndList: a matrix of a git files
// generator and a list generates their product, with the parameters of
// both; a template that names a missing key under missingkey=error fails
// with a condition naming the key, and writes nothing; a generator tollgate
// does not implement is refused with a condition naming it.
func TestApplicationSetMatrixOfGitFilesAndList(t *testing.T) {
	f := newFixture(t, map[string]string{
		"teams/red/config.yaml":  "team: red\n",
		"teams/blue/config.yaml": "team: blue\n",
		"apps/alpha/cm.yaml":     configMap("alpha", "1"),
	})
	f.project()
	matrix := `
spec:
  goTemplate: true
  goTemplateOptions: [missingkey=error]
  generators:
  - matrix:
      generators:
      - git:
          repoURL: %[3]s
          revision: %[4]s
          files:
          - path: teams/*/config.yaml
      - list:
          elements:
          - env: dev
          - env: prod
  template:
    metadata:
      name: '%[1]s-{{.team}}-{{.env}}'
      labels: {team: '{{.team}}', env: '{{.env}}', dir: '{{.path.basename}}'}
    spec:
      project: %[1]s
      source: {repoURL: '%[3]s', targetRevision: '%[4]s', path: apps/alpha}
      destination: {server: 'https://kubernetes.default.svc', namespace: '%[2]s'}
`
	set := f.appSet(argoNS, matrix)
	apps := waitGenerated(t, argoNS, set, f.name+"-blue-dev", f.name+"-blue-prod", f.name+"-red-dev", f.name+"-red-prod")
	if l := apps[f.name+"-red-prod"].Labels; l["team"] != "red" || l["env"] != "prod" || l["dir"] != "red" {
		t.Errorf("labels %v, want the parameters of both generators", l)
	}

	broken := f.appSetNamed(argoNS, f.name+"-broken", strings.Replace(matrix, "'%[1]s-{{.team}}-{{.env}}'", "'%[1]s-{{.team}}-{{.region}}'", 1))
	waitCondition(t, broken, v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetReasonRenderTemplateParamsError,
		`map has no entry for key "region"`)
	waitCondition(t, broken, v1alpha1.ApplicationSetConditionParametersGenerated, v1alpha1.ApplicationSetConditionStatusFalse, v1alpha1.ApplicationSetReasonErrorOccurred)
	if apps := generated(t, argoNS, broken); len(apps) != 0 {
		t.Errorf("applications written by a template that does not render: %v", apps)
	}

	// A provider tollgate does not implement is refused by name.
	scm := f.appSetNamed(argoNS, f.name+"-scm", `
spec:
  generators:
  - scmProvider: {awsCodeCommit: {region: eu-west-1}}
  template:
    metadata: {name: '%[1]s-{{repository}}'}
    spec:
      project: %[1]s
      source: {repoURL: '%[3]s', path: apps/alpha}
      destination: {server: 'https://kubernetes.default.svc', namespace: '%[2]s'}
`)
	waitCondition(t, scm, v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError,
		"spec.generators[0].scmProvider.awsCodeCommit is not supported")
}

// TestApplicationSetRemovedElement: an element removed from a list. With
// applicationsSync create-only its Application stays; by default it is
// deleted, and with preserveResourcesOnDeletion (no resources finalizer)
// what it synced stays in the cluster.
func TestApplicationSetRemovedElement(t *testing.T) {
	f := newFixture(t, map[string]string{
		"apps/a/cm.yaml": configMap("a", "1"), "apps/b/cm.yaml": configMap("b", "1"),
		"apps/c/cm.yaml": configMap("c", "1"), "apps/d/cm.yaml": configMap("d", "1"),
	})
	f.project()
	set := func(name, policy string, elems ...string) *v1alpha1.ApplicationSet {
		var list []string
		for _, e := range elems {
			list = append(list, "{dir: "+e+"}")
		}
		return f.appSetNamed(argoNS, f.name+"-"+name, `
spec:
  generators:
  - list: {elements: [`+strings.Join(list, ", ")+`]}
  syncPolicy: `+policy+`
  template:
    metadata: {name: '%[1]s-`+name+`-{{dir}}'}
    spec:
      project: %[1]s
      source: {repoURL: '%[3]s', targetRevision: '%[4]s', path: 'apps/{{dir}}'}
      destination: {server: 'https://kubernetes.default.svc', namespace: '%[2]s'}
      syncPolicy: {automated: {prune: true}}
`)
	}
	keep := set("keep", "{applicationsSync: create-only}", "a", "b")
	preserve := set("preserve", "{preserveResourcesOnDeletion: true}", "c", "d")
	waitGenerated(t, argoNS, keep, f.name+"-keep-a", f.name+"-keep-b")
	apps := waitGenerated(t, argoNS, preserve, f.name+"-preserve-c", f.name+"-preserve-d")
	if fin := apps[f.name+"-preserve-d"].Finalizers; len(fin) != 0 {
		t.Errorf("finalizers %v with preserveResourcesOnDeletion, want none", fin)
	}
	for _, cm := range []string{"a", "b", "c", "d"} {
		eventually(t, "configmap "+cm+" synced", func() (bool, string) {
			err := f.get(&corev1.ConfigMap{}, cm)
			return err == nil, fmt.Sprint(err)
		})
	}
	drop := func(s *v1alpha1.ApplicationSet) {
		edit(t, s.DeepCopy(), func(live *v1alpha1.ApplicationSet) {
			live.Spec.Generators[0].List.Elements = live.Spec.Generators[0].List.Elements[:1]
		})
	}
	drop(keep)
	drop(preserve)
	waitGenerated(t, argoNS, preserve, f.name+"-preserve-c")
	consistently(t, "create-only keeps the Application of a removed element, preserveResourcesOnDeletion its ConfigMap", 3*time.Second, func() (bool, string) {
		if _, ok := generated(t, argoNS, keep)[f.name+"-keep-b"]; !ok {
			return false, "application keep-b deleted"
		}
		err := f.get(&corev1.ConfigMap{}, "d")
		return err == nil, fmt.Sprint(err)
	})
}

// TestApplicationSetSourceNamespace: an ApplicationSet of a namespace
// listed in --applicationset-namespaces whose project permits that
// namespace (sourceNamespaces) generates its Applications there.
func TestApplicationSetSourceNamespace(t *testing.T) {
	f := newFixture(t, map[string]string{"apps/alpha/cm.yaml": configMap("alpha", "1")})
	f.editProject = func(p *v1alpha1.AppProject) { p.Spec.SourceNamespaces = []string{appSetNS} }
	f.project()
	listed := strings.Replace(listSet, "%[5]s", listElements(map[string]string{"name": "ok", "project": f.name, "repo": f.repoURL, "namespace": f.ns}), 1)
	set := f.appSet(appSetNS, listed)
	apps := waitGenerated(t, appSetNS, set, f.name+"-ok")
	if app := apps[f.name+"-ok"]; app.Namespace != appSetNS {
		t.Errorf("generated into %s, want %s", app.Namespace, appSetNS)
	}
	waitCondition(t, set, v1alpha1.ApplicationSetConditionResourcesUpToDate, v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetReasonApplicationSetUpToDate)
}

// jsonEqual compares two values by their JSON.
func jsonEqual(a, b any) bool { return jsonText(a) == jsonText(b) }

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// writeFile writes content to path, creating its directory.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestApplicationSetClusters: a new Argo CD cluster Secret that a clusters
// generator selects generates its Application within seconds, with the
// Secret's name and server as parameters. (The generated Applications
// deploy in-cluster: an Application of an unreachable cluster would keep
// the shared engine's workers waiting on it.)
func TestApplicationSetClusters(t *testing.T) {
	f := newFixture(t, map[string]string{"apps/alpha/cm.yaml": configMap("alpha", "1")})
	const staging = "https://staging.example.com"
	f.project()
	set := f.appSet(argoNS, `
spec:
  generators:
  - clusters:
      selector:
        matchLabels: {tollgate.dev/test: '%[1]s'}
  template:
    metadata:
      name: '%[1]s-{{name}}'
      annotations: {tollgate.dev/test-cluster-server: '{{server}}'}
    spec:
      project: %[1]s
      source: {repoURL: '%[3]s', targetRevision: '%[4]s', path: apps/alpha}
      destination: {server: 'https://kubernetes.default.svc', namespace: '%[2]s'}
`)
	waitCondition(t, set, v1alpha1.ApplicationSetConditionResourcesUpToDate, v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetReasonApplicationSetUpToDate)
	if apps := generated(t, argoNS, set); len(apps) != 0 {
		t.Fatalf("generated %v before any cluster Secret", apps)
	}
	f.create(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: f.name + "-cluster", Namespace: argoNS, Labels: map[string]string{
			"argocd.argoproj.io/secret-type": "cluster", "tollgate.dev/test": f.name,
		}},
		StringData: map[string]string{"name": f.name + "-staging", "server": staging, "config": `{"tlsClientConfig":{"insecure":false}}`},
	})
	apps := waitGenerated(t, argoNS, set, f.name+"-"+f.name+"-staging")
	if got := apps[f.name+"-"+f.name+"-staging"].Annotations["tollgate.dev/test-cluster-server"]; got != staging {
		t.Errorf("server parameter %q, want the cluster Secret's %q", got, staging)
	}
}

// TestApplicationSetClusterCredentials: a cluster Secret applied
// client-side keeps its data, the bearer token, in the last-applied
// annotation. A template that writes that annotation (or every
// annotation) into its Application gets nothing of it: neither the
// generated Application nor the ApplicationSet's status holds the token.
func TestApplicationSetClusterCredentials(t *testing.T) {
	f := newFixture(t, map[string]string{"apps/alpha/cm.yaml": configMap("alpha", "1")})
	const token = "eyJhbGciOiJSUzI1NiJ9.production-cluster-token"
	config := `{"bearerToken":"` + token + `","tlsClientConfig":{"insecure":false}}`
	lastApplied, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": f.name + "-cluster", "namespace": argoNS, "labels": map[string]string{"argocd.argoproj.io/secret-type": "cluster", "tollgate.dev/test": f.name}},
		"stringData": map[string]string{"name": f.name + "-prod", "server": "https://prod.example.com", "config": config},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.project()
	f.create(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: f.name + "-cluster", Namespace: argoNS,
			Labels:      map[string]string{"argocd.argoproj.io/secret-type": "cluster", "tollgate.dev/test": f.name},
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(lastApplied), "team": "web"},
		},
		StringData: map[string]string{"name": f.name + "-prod", "server": "https://prod.example.com", "config": config},
	})
	const manifest = `
spec:
  goTemplate: true
  generators:
  - clusters:
      selector:
        matchLabels: {tollgate.dev/test: '%[1]s'}
  template:
    metadata:
      name: '%[1]s-{{ .name }}'
      annotations:
        tollgate.dev/test-leak: '{{ index .metadata.annotations "kubectl.kubernetes.io/last-applied-configuration" }}'
        tollgate.dev/test-all: '{{ .metadata.annotations }}'
    spec:
      project: %[1]s
      source: {repoURL: '%[3]s', targetRevision: '%[4]s', path: apps/alpha}
      destination: {server: 'https://kubernetes.default.svc', namespace: '%[2]s'}
`
	set := f.appSet(argoNS, manifest)
	name := f.name + "-" + f.name + "-prod"
	app := waitGenerated(t, argoNS, set, name)[name]
	want := map[string]string{"tollgate.dev/test-leak": "", "tollgate.dev/test-all": "map[team:web]"}
	got := map[string]string{}
	for k, v := range app.Annotations {
		if strings.HasPrefix(k, "tollgate.dev/test-") {
			got[k] = v
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("generated Application's annotations (-want +got):\n%s", diff)
	}
	if text := jsonText(app); strings.Contains(text, token) {
		t.Errorf("the generated Application holds the cluster's token:\n%s", text)
	}
	live := waitCondition(t, set, v1alpha1.ApplicationSetConditionResourcesUpToDate, v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetReasonApplicationSetUpToDate)
	if text := jsonText(live); strings.Contains(text, token) {
		t.Errorf("the ApplicationSet holds the cluster's token:\n%s", text)
	}

	// The CLI, given the Secret as the API server holds it, generates the
	// same Application, and neither it nor its parameters hold the token.
	var secret corev1.Secret
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: argoNS, Name: f.name + "-cluster"}, &secret); err != nil {
		t.Fatal(err)
	}
	secret.APIVersion, secret.Kind = "v1", "Secret"
	if secret.Annotations["kubectl.kubernetes.io/last-applied-configuration"] == "" || !strings.Contains(string(secret.Data["config"]), token) {
		t.Fatal("the cluster Secret lost its data or its annotation: the test proves nothing")
	}
	clusterFile, setFile := filepath.Join(t.TempDir(), "cluster.json"), filepath.Join(t.TempDir(), "appset.yaml")
	writeFile(t, clusterFile, jsonText(&secret))
	writeFile(t, setFile, "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: "+f.name+"\n  namespace: "+argoNS+"\n"+f.expand(manifest))
	sets, err := check.GenerateApplicationSets(t.Context(), setFile, check.AppSetOptions{RepoRoot: t.TempDir(), RepoURL: f.repoURL, ClusterFiles: []string{clusterFile}})
	if err != nil {
		t.Fatalf("generate with the CLI: %v", err)
	}
	if text := jsonText(sets); strings.Contains(text, token) {
		t.Errorf("the CLI's Applications or parameters hold the cluster's token:\n%s", text)
	}
	if len(sets) != 1 || len(sets[0].Applications) != 1 {
		t.Fatalf("the CLI generated %s, want one Application", jsonText(sets))
	}
	annotations, _, _ := unstructured.NestedStringMap(sets[0].Applications[0].Application, "metadata", "annotations")
	if diff := cmp.Diff(want, annotations); diff != "" {
		t.Errorf("the CLI's Application's annotations (-want +got):\n%s", diff)
	}
}

// TestApplicationSetDeletedKeepsApplications: an ApplicationSet with
// applicationsSync create-update and its own resources finalizer, when
// deleted, first releases its Applications (their owner reference goes,
// so the garbage collector leaves them), then its finalizer, as Argo CD's
// controller does.
func TestApplicationSetDeletedKeepsApplications(t *testing.T) {
	f := newFixture(t, map[string]string{"apps/alpha/cm.yaml": configMap("alpha", "1")})
	f.project()
	set := f.appSet(argoNS, `
metadata:
  finalizers: [resources-finalizer.argocd.argoproj.io]
spec:
  syncPolicy: {applicationsSync: create-update}
  generators:
  - list: {elements: [{dir: alpha}]}
  template:
    metadata: {name: '%[1]s-{{dir}}'}
    spec:
      project: %[1]s
      source: {repoURL: '%[3]s', targetRevision: '%[4]s', path: 'apps/{{dir}}'}
      destination: {server: 'https://kubernetes.default.svc', namespace: '%[2]s'}
`)
	apps := waitGenerated(t, argoNS, set, f.name+"-alpha")
	kept := apps[f.name+"-alpha"]
	t.Cleanup(func() {
		_ = env.Client.Patch(context.Background(), kept, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
		_ = env.Client.Delete(context.Background(), kept)
	})
	if err := env.Client.Delete(t.Context(), set); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the ApplicationSet gone", func() (bool, string) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(set), &v1alpha1.ApplicationSet{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	var app v1alpha1.Application
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(kept), &app); err != nil {
		t.Fatalf("the Application is gone: %v", err)
	}
	if len(app.OwnerReferences) != 0 {
		t.Errorf("owner references %v, want none, so that the garbage collector leaves it", app.OwnerReferences)
	}
}
