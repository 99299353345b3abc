package main

import (
	"bytes"
	"cmp"
	"path/filepath"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/controller/application"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/server"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// diffDeployment is a Deployment web in guestbook, normalized as application.Diff
// returns it.
func diffDeployment(replicas int64, image string) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "guestbook",
			"annotations": map[string]any{"argocd.argoproj.io/tracking-id": "guestbook:apps/Deployment:guestbook/web"},
		},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": image}}},
			},
		},
	}
}

func diffConfigMap(name string, data map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "guestbook"}, "data": data}
}

// appDiff has one object of each kind of difference, and one in sync.
func appDiff() *application.AppDiff {
	ref := func(group, kind, name string) apply.Ref {
		return apply.Ref{Group: group, Version: "v1", Kind: kind, Namespace: "guestbook", Name: name}
	}
	secret := func(data map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db", "namespace": "guestbook"}, "type": "Opaque", "data": data}
	}
	return &application.AppDiff{Objects: []application.ObjectDiff{
		{Ref: ref("", "ConfigMap", "new"), Target: diffConfigMap("new", map[string]any{"greeting": "hello"}), Modified: true},
		{Ref: ref("", "ConfigMap", "old"), Live: diffConfigMap("old", map[string]any{"greeting": "bye"}), Modified: true, RequiresPruning: true},
		{Ref: ref("", "ConfigMap", "same"), Live: diffConfigMap("same", nil), Target: diffConfigMap("same", nil)},
		{Ref: ref("", "Secret", "db"), Live: secret(map[string]any{"password": "++++++++", "user": "++++++++"}), Target: secret(map[string]any{"password": "+++++++++", "user": "++++++++"}), Modified: true},
		{Ref: ref("apps", "Deployment", "web"), Live: diffDeployment(1, "web:1.0"), Target: diffDeployment(3, "web:1.1"), Modified: true},
		{Ref: ref("batch", "CronJob", "report"), Modified: true, Error: `CronJob.batch "report" is invalid: spec.schedule: Invalid value: "often": unparseable`},
	}}
}

func TestWriteAppDiff(t *testing.T) {
	var out bytes.Buffer
	if err := writeAppDiff(&out, appDiff(), false); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "app-diff.golden", out.String())

	out.Reset()
	if err := writeAppDiff(&out, &application.AppDiff{Objects: appDiff().Objects[2:3]}, false); err != nil || out.String() != "" {
		t.Errorf("nothing differs: %q, %v; want no output", out.String(), err)
	}
}

func TestWriteAppDiffColored(t *testing.T) {
	d := &application.AppDiff{Objects: []application.ObjectDiff{{
		Ref:  apply.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "guestbook", Name: "web"},
		Live: diffConfigMap("web", map[string]any{"a": "1"}), Target: diffConfigMap("web", map[string]any{"a": "2"}), Modified: true,
	}}}
	var out bytes.Buffer
	if err := writeAppDiff(&out, d, true); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"===== /ConfigMap guestbook/web ======",
		"--- live",
		"+++ desired",
		ansiCyan + "@@ -1,6 +1,6 @@" + ansiReset,
		" apiVersion: v1",
		" data:",
		ansiRed + `-  a: "1"` + ansiReset,
		ansiGreen + `+  a: "2"` + ansiReset,
		" kind: ConfigMap",
		" metadata:",
		"   name: web",
		"",
	}, "\n")
	if diff := gocmp.Diff(want, out.String()); diff != "" {
		t.Errorf("coloured diff (-want +got):\n%s", diff)
	}
	if colorful(&out) {
		t.Error("a buffer is not a terminal")
	}
}

func TestSetRevision(t *testing.T) {
	single := &v1alpha1.Application{}
	single.Spec.Source = &v1alpha1.ApplicationSource{TargetRevision: "main"}
	setRevision(single, "v2")
	multi := &v1alpha1.Application{}
	multi.Spec.Sources = []v1alpha1.ApplicationSource{{TargetRevision: "main"}, {TargetRevision: "v1", Ref: "values"}}
	setRevision(multi, "abc123")
	setRevision(multi, "")
	if single.Spec.Source.TargetRevision != "v2" || multi.Spec.Sources[0].TargetRevision != "abc123" || multi.Spec.Sources[1].TargetRevision != "v1" {
		t.Errorf("revisions: %q, %+v", single.Spec.Source.TargetRevision, multi.Spec.Sources)
	}
}

func TestAppDiffUsage(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "no name", args: []string{"app", "diff"}, want: "accepts 1 arg(s), received 0"},
		{name: "bad limit", args: []string{"app", "diff", "web", "--render-timeout", "0s"}, want: "invalid --render-timeout 0s: must be positive"},
		{name: "no kubeconfig", args: []string{"app", "diff", "web", "--kubeconfig", missing}, want: "load kubeconfig " + missing},
		{name: "local and revision", args: []string{"app", "diff", "web", "--local", ".", "--revision", "v1"}, want: "--local and --revision cannot be used together"},
		{name: "root without local", args: []string{"app", "diff", "web", "--local-repo-root", "."}, want: "--local-repo-root needs --local"},
		{name: "no policy configuration", args: []string{"app", "diff", "web", "--config", missing}, want: "load config: "},
		{name: "bad tracking method", args: []string{"app", "diff", "web", "--tracking-method", "guess"}, want: `invalid --tracking-method "guess"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, nil, tc.args...)
			if r.code != exitUsage || !strings.HasPrefix(r.err, tc.want) || r.stdout != "" {
				t.Errorf("exit %d, error %q, stdout %q; want exit %d and an error starting %q", r.code, r.err, r.stdout, exitUsage, tc.want)
			}
		})
	}
}

func TestUseLocal(t *testing.T) {
	root := t.TempDir()
	testutil.WriteFiles(t, root, map[string]string{
		"base/kustomization.yaml":         "resources: [configmap.yaml]\n",
		"base/configmap.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  key: base\n",
		"overlays/dev/kustomization.yaml": "resources: [../../base]\nnamePrefix: dev-\n",
	})
	dev := filepath.Join(root, "overlays", "dev")
	single := func() *v1alpha1.Application {
		a := &v1alpha1.Application{}
		a.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/config.git", Path: "apps/web", TargetRevision: "main"}
		return a
	}
	multi := single()
	multi.Spec.Sources, multi.Spec.Source = []v1alpha1.ApplicationSource{*multi.Spec.Source, *multi.Spec.Source}, nil
	tests := []struct {
		name      string
		app       *v1alpha1.Application
		dir, root string
		wantPath  string
		wantErr   string
	}{
		{name: "overlay in its checkout", app: single(), dir: dev, root: root, wantPath: "overlays/dev"},
		{name: "the directory is the root", app: single(), dir: dev, wantPath: "."},
		{name: "outside the root", app: single(), dir: root, root: dev, wantErr: "--local " + root + " is not inside --local-repo-root " + dev},
		{name: "not a directory", app: single(), dir: filepath.Join(root, "base", "configmap.yaml"), wantErr: "--local " + filepath.Join(root, "base", "configmap.yaml") + ": not a directory"},
		{name: "several sources", app: multi, dir: dev, wantErr: "--local needs an application with one source (spec.source)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := useLocal(tc.app, tc.dir, tc.root)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || exitCode(err) != exitUsage {
					t.Fatalf("error = %v (exit %d), want %q", err, exitCode(err), tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := cmp.Or(tc.root, tc.dir); got != want || tc.app.Spec.Source.Path != tc.wantPath {
				t.Errorf("root %q, path %q; want %q, %q", got, tc.app.Spec.Source.Path, want, tc.wantPath)
			}
		})
	}

	// The overlay renders from disk, reaching its base in the checkout.
	app := single()
	abs, err := useLocal(app, dev, root)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := server.New(localSource{root: abs}, server.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := svc.Generate(t.Context(), &reposerver.Request{AppName: "web", Sources: []reposerver.Source{{Source: *app.Spec.Source}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Objects) != 1 || !strings.Contains(string(resp.Objects[0]), `"name":"dev-settings"`) || resp.Revisions[0] != localRevision {
		t.Errorf("rendered %s at %v, want dev-settings at %s", resp.Objects, resp.Revisions, localRevision)
	}
}
