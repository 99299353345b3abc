package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// kustomizeFiles is baseFiles as a Kustomize directory, for the CLI's
// Kustomize flags.
func kustomizeFiles() map[string]string {
	files := baseFiles()
	files["manifests/kustomization.yaml"] = "resources: [configmap.yaml, deployment.yaml, service.yaml]\n"
	return files
}

// cliApplication is the Application of the fixture as a user writes it for
// app create -f: automated with prune, no retries.
func (f *fixture) cliApplication() *v1alpha1.Application {
	return &v1alpha1.Application{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Application"},
		ObjectMeta: metav1.ObjectMeta{Name: f.name, Namespace: f.cp, Labels: map[string]string{"team": "web"}},
		Spec: v1alpha1.ApplicationSpec{
			Project:     f.name,
			Source:      &v1alpha1.ApplicationSource{RepoURL: f.repoURL, Path: "manifests", TargetRevision: gitserver.DefaultBranch},
			Destination: v1alpha1.ApplicationDestination{Server: inCluster, Namespace: f.ns},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: automated(true, false), Retry: &v1alpha1.RetryStrategy{}},
		},
	}
}

// writeApp writes app as YAML into path, for app create -f.
func writeApp(t *testing.T, path string, app *v1alpha1.Application) {
	t.Helper()
	data, err := yaml.Marshal(app)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// deleteAtEnd deletes the Application the CLI created when the test ends,
// finalizers removed, as fixture.create does for its own.
func (f *fixture) deleteAtEnd(name string) {
	f.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.cp}}
		_ = env.Client.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
		_ = env.Client.Delete(ctx, app)
	})
}

// waitDeployment waits until the Deployment name runs image and the
// Application is Synced and Healthy at rev again: the Application is
// automated, and a source changed at the revision last synced is synced
// again, as Argo CD's automated sync does.
func (f *fixture) waitDeployment(name, image, rev string) {
	f.t.Helper()
	eventually(f.t, "deployment "+name+" runs "+image, func() (bool, string) {
		got := f.deploymentImage(name)
		return got == image, "image " + got + "; " + describeApp(f.app())
	})
	f.waitSynced(rev)
}

// TestCLIAppCreateSetUnsetPatch drives tollgate app create -f (created,
// unchanged, the refusal of another spec, --upsert), app set's field
// flags, app unset and app patch (json and merge) against the API server,
// and checks that the engine syncs what each wrote.
func TestCLIAppCreateSetUnsetPatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, kustomizeFiles())
	f.project()
	f.deleteAtEnd(f.name)
	file := filepath.Join(t.TempDir(), "app.yaml")
	want := f.cliApplication()
	writeApp(t, file, want)

	if out := tollgateOK(t, "app", "create", "-f", file); out != fmt.Sprintf("application '%s' created\n", f.name) {
		t.Errorf("app create: %q", out)
	}
	got := f.app()
	if d := cmp.Diff(want.Spec, got.Spec); d != "" {
		t.Errorf("created spec (-want +got):\n%s", d)
	}
	if got.Labels["team"] != "web" {
		t.Errorf("labels %v, want team=web", got.Labels)
	}
	f.waitSynced(f.head)
	// The engine has written the Application since (status): the same file
	// is no change.
	if out := tollgateOK(t, "app", "create", "-f", file); out != fmt.Sprintf("application '%s' unchanged\n", f.name) {
		t.Errorf("app create again: %q", out)
	}

	want.Spec.Source.Kustomize = &v1alpha1.ApplicationSourceKustomize{NamePrefix: "created-"}
	writeApp(t, file, want)
	tollgateFails(t, 2, "existing application spec is different, use upsert flag to force update", "app", "create", "-f", file)
	if k := f.app().Spec.Source.Kustomize; k != nil {
		t.Errorf("refused create changed the spec: kustomize %+v", k)
	}
	if out := tollgateOK(t, "app", "create", "-f", file, "--upsert"); out != fmt.Sprintf("application '%s' updated\n", f.name) {
		t.Errorf("app create --upsert: %q", out)
	}
	f.waitDeployment("created-web", "registry.example.com/web:1.0.0", f.head)

	// app set: Kustomize flags, a sync option and the retry limit.
	tollgateOK(t, "app", "set", f.name, "--nameprefix", "set-", "--kustomize-image", "registry.example.com/web=registry.example.com/web:2.0.0",
		"--sync-option", "Validate=false", "--sync-retry-limit", "2")
	spec := f.app().Spec
	wantKustomize := &v1alpha1.ApplicationSourceKustomize{NamePrefix: "set-", Images: []string{"registry.example.com/web=registry.example.com/web:2.0.0"}}
	if d := cmp.Diff(wantKustomize, spec.Source.Kustomize); d != "" {
		t.Errorf("app set: kustomize (-want +got):\n%s", d)
	}
	if p := spec.SyncPolicy; p == nil || p.Automated == nil || !slices.Contains(p.SyncOptions, "Validate=false") || p.Retry == nil || p.Retry.Limit != 2 {
		t.Errorf("app set: sync policy %+v, want automated kept, Validate=false and retry limit 2", p)
	}
	f.waitDeployment("set-web", "registry.example.com/web:2.0.0", f.head)

	// app unset: the prefix and the image override go, the rest stays.
	tollgateOK(t, "app", "unset", f.name, "--nameprefix", "--kustomize-image", "registry.example.com/web")
	if k := f.app().Spec.Source.Kustomize; k != nil && (k.NamePrefix != "" || len(k.Images) != 0) {
		t.Errorf("app unset: kustomize %+v, want no prefix and no images", k)
	}
	f.waitDeployment("web", "registry.example.com/web:1.0.0", f.head)

	// app patch: a merge patch of the source, a JSON patch of the revision
	// and a label.
	out := tollgateOK(t, "app", "patch", f.name, "--type", "merge", "--patch", `{"spec":{"source":{"kustomize":{"nameSuffix":"-patched"}}}}`)
	if !strings.Contains(out, "nameSuffix: -patched") {
		t.Errorf("app patch --type merge printed no nameSuffix:\n%s", out)
	}
	f.waitDeployment("web-patched", "registry.example.com/web:1.0.0", f.head)
	tollgateOK(t, "app", "patch", f.name, "--patch",
		`[{"op":"replace","path":"/spec/source/targetRevision","value":"`+f.head+`"},{"op":"add","path":"/metadata/labels/patched","value":"yes"}]`)
	got = f.app()
	if got.Spec.Source.TargetRevision != f.head || got.Labels["patched"] != "yes" || got.Labels["team"] != "web" {
		t.Errorf("app patch: targetRevision %q, labels %v; want %s, patched=yes and team=web", got.Spec.Source.TargetRevision, got.Labels, f.head)
	}
	tollgateFails(t, 2, "error applying patch", "app", "patch", f.name, "--patch", `[{"op":"remove","path":"/spec/nothing"}]`)
	f.waitSynced(f.head)
}
