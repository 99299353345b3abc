package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// TestCLIRepoAddPrivate: tollgate repo add URL --username --password
// writes the repository Secret the engine reads: an Application of a
// private repository fails to fetch until then, and syncs once it is
// there; repo list shows it and repo rm removes it.
func TestCLIRepoAddPrivate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles(), gitserver.WithBasicAuth("cli-bot", "s3cret-cli"))
	f.application(automated(true, false), nil)
	f.waitApp("refused without credentials", func(a *v1alpha1.Application) bool {
		msg, _ := condition(a, v1alpha1.ApplicationConditionComparisonError)
		return strings.Contains(msg, "authentication")
	})

	if out := tollgateOK(t, "repo", "add", f.repoURL, "--username", "cli-bot", "--password", "s3cret-cli", "--argocd-namespace", f.cp); out != fmt.Sprintf("Repository '%s' added\n", f.repoURL) {
		t.Errorf("repo add: %q", out)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var list corev1.SecretList
		_ = env.Client.List(ctx, &list, client.InNamespace(f.cp), client.MatchingLabels{"argocd.argoproj.io/secret-type": "repository"})
		for i := range list.Items {
			if string(list.Items[i].Data["url"]) == f.repoURL {
				_ = env.Client.Delete(ctx, &list.Items[i])
			}
		}
	})
	f.refresh()
	f.waitSynced(f.head)
	if out := tollgateOK(t, "repo", "list", "--argocd-namespace", f.cp, "-o", "url"); !strings.Contains(out, f.repoURL+"\n") {
		t.Errorf("repo list -o url has no %s:\n%s", f.repoURL, out)
	}
	// The same again is no change; another password is refused without
	// --upsert.
	tollgateOK(t, "repo", "add", f.repoURL, "--username", "cli-bot", "--password", "s3cret-cli", "--argocd-namespace", f.cp)
	tollgateFails(t, 2, "existing repository spec is different; use upsert flag to force update",
		"repo", "add", f.repoURL, "--username", "cli-bot", "--password", "other", "--argocd-namespace", f.cp)
	tollgateOK(t, "repo", "rm", f.repoURL, "--argocd-namespace", f.cp)
	if out := tollgateOK(t, "repo", "list", "--argocd-namespace", f.cp, "-o", "url"); strings.Contains(out, f.repoURL) {
		t.Errorf("repo list after repo rm still has %s:\n%s", f.repoURL, out)
	}
}

// TestCLIAppReads: tollgate app get -o tree, app resources (table and
// tree) and app manifests (git and live) of a synced Application, as a
// user reads them with the kubeconfig.
func TestCLIAppReads(t *testing.T) {
	t.Parallel()
	f := newFixture(t, baseFiles())
	f.application(automated(true, false), nil)
	f.waitSynced(f.head)

	get := tollgateOK(t, "app", "get", f.name, "--namespace", f.cp, "-o", "tree")
	wantLines(t, "app get -o tree", get, "Name: "+f.cp+"/"+f.name, "Project: "+f.name,
		fmt.Sprintf("Sync Status: Synced to %s (%.7s)", gitserver.DefaultBranch, f.head), "Health Status: Healthy",
		"KIND/NAME STATUS HEALTH MESSAGE", "ConfigMap/settings Synced Healthy created", "Service/web Synced Healthy created",
		"Deployment/web Synced Healthy created")

	// Without a controller manager nothing owns more objects: the tree is
	// the table's rows, in argocd's tree columns.
	rows := []string{"GROUP KIND NAMESPACE NAME ORPHANED", fmt.Sprintf("ConfigMap %s settings No", f.ns),
		fmt.Sprintf("Service %s web No", f.ns), fmt.Sprintf("apps Deployment %s web No", f.ns)}
	wantLines(t, "app resources", tollgateOK(t, "app", "resources", f.name, "--namespace", f.cp), rows...)
	wantLines(t, "app resources --output tree", tollgateOK(t, "app", "resources", f.name, "--namespace", f.cp, "--output", "tree"), rows...)

	git := manifestObjects(t, tollgateOK(t, "app", "manifests", f.name, "--namespace", f.cp, "--allow-insecure-repos"))
	live := manifestObjects(t, tollgateOK(t, "app", "manifests", f.name, "--namespace", f.cp, "--source", "live"))
	for _, objs := range []map[string]*unstructured.Unstructured{git, live} {
		if len(objs) != 3 || objs["ConfigMap/settings"] == nil || objs["Deployment/web"] == nil || objs["Service/web"] == nil {
			t.Fatalf("app manifests: %v, want the ConfigMap, Deployment and Service", keys(objs))
		}
	}
	if v, _, _ := unstructured.NestedString(git["ConfigMap/settings"].Object, "data", "key"); v != "v1" {
		t.Errorf("app manifests (git): settings key %q, want v1", v)
	}
	if live["Deployment/web"].GetUID() == "" || git["Deployment/web"].GetUID() != "" {
		t.Errorf("app manifests: live Deployment uid %q, git's %q; want the live object's and none", live["Deployment/web"].GetUID(), git["Deployment/web"].GetUID())
	}
	if live["Deployment/web"].GetManagedFields() != nil {
		t.Errorf("app manifests --source live: managedFields kept")
	}
}

// manifestObjects decodes the YAML documents app manifests prints, by
// KIND/NAME.
func manifestObjects(t *testing.T, out string) map[string]*unstructured.Unstructured {
	t.Helper()
	objs := map[string]*unstructured.Unstructured{}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			break
		}
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			t.Fatalf("app manifests printed %s: %v", raw, err)
		}
		objs[u.GetKind()+"/"+u.GetName()] = u
	}
	return objs
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestCLIAppSetListGetDelete: tollgate appset list, get and delete of an
// ApplicationSet the engine has generated from, through the API server.
func TestCLIAppSetListGetDelete(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"apps/alpha/cm.yaml": configMap("alpha", "1")})
	f.project()
	set := f.appSet(argoNS, `
spec:
  generators:
  - list: {elements: [{dir: alpha}]}
  template:
    metadata: {name: '%[1]s-{{dir}}'}
    spec:
      project: %[1]s
      source: {repoURL: '%[3]s', targetRevision: '%[4]s', path: 'apps/{{dir}}'}
      destination: {server: 'https://kubernetes.default.svc', namespace: '%[2]s'}
`)
	waitGenerated(t, argoNS, set, f.name+"-alpha")

	if out := tollgateOK(t, "appset", "list", "--namespace", argoNS, "-o", "name", "-p", f.name); out != argoNS+"/"+f.name+"\n" && out != f.name+"\n" {
		t.Errorf("appset list -o name -p %s: %q", f.name, out)
	}
	wide := tollgateOK(t, "appset", "list", "--namespace", argoNS, "-p", f.name)
	if !strings.Contains(wide, f.name) || !strings.HasPrefix(wide, "NAME") {
		t.Errorf("appset list: %s", wide)
	}
	get := tollgateOK(t, "appset", "get", f.name, "--namespace", argoNS)
	wantLines(t, "appset get", get, "Project: "+f.name, "Source:", "- Repo: "+f.repoURL, "Path: apps/{{dir}}")
	tollgateFails(t, 2, "not found", "appset", "get", f.name+"-missing", "--namespace", argoNS)

	if out := tollgateOK(t, "appset", "delete", f.name, "--namespace", argoNS, "--yes", "--wait"); out != fmt.Sprintf("applicationset '%s' deleted\n", f.name) {
		t.Errorf("appset delete: %q", out)
	}
	if out := tollgateOK(t, "appset", "list", "--namespace", argoNS, "-o", "name", "-p", f.name); out != "" {
		t.Errorf("appset list after delete: %q", out)
	}
}
