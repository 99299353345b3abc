package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// parseCreateFlags parses args as app create's flags.
func parseCreateFlags(t *testing.T, args ...string) (*appCreateOptions, *pflag.FlagSet, []string) {
	t.Helper()
	o := &appCreateOptions{}
	f := pflag.NewFlagSet("create", pflag.ContinueOnError)
	o.addFlags(f)
	f.StringVar(&o.appName, "name", "", "")
	f.BoolVar(&o.upsert, "upsert", false, "")
	f.StringVarP(&o.file, "file", "f", "", "")
	f.StringArrayVarP(&o.labels, "label", "l", nil, "")
	f.StringArrayVar(&o.annotations, "annotations", nil, "")
	f.BoolVar(&o.setFinalizer, "set-finalizer", false, "")
	addAppSpecFlags(f, &o.spec)
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
	o.namespace = "argocd"
	return o, f, f.Args()
}

const guestbookYAML = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
  labels: {team: a}
spec:
  project: default
  source:
    repoURL: https://github.com/argoproj/argocd-example-apps.git
    path: guestbook
    targetRevision: HEAD
  destination:
    server: https://kubernetes.default.svc
    namespace: guestbook
`

// TestCreateApps: argocd app create from flags and from -f, with and
// without --upsert, and its messages.
func TestCreateApps(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "guestbook.yaml")
	if err := os.WriteFile(file, []byte(guestbookYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	c := fakeAppClient(t)
	run := func(args ...string) (string, error) {
		t.Helper()
		o, f, rest := parseCreateFlags(t, args...)
		apps, err := o.construct(f, rest)
		if err != nil {
			return "", err
		}
		var out bytes.Buffer
		err = createApps(t.Context(), c, apps, o.upsert, &out)
		return out.String(), err
	}
	get := func(ns, name string) *v1alpha1.Application {
		t.Helper()
		var a v1alpha1.Application
		if err := c.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: name}, &a); err != nil {
			t.Fatal(err)
		}
		return &a
	}

	out, err := run("web", "--repo", "https://git.example.com/a.git", "--path", "apps/web", "--dest-server", "https://kubernetes.default.svc", "--dest-namespace", "web",
		"--sync-policy", "automated", "--auto-prune", "--label", "team=a", "--annotations", "note=x", "--set-finalizer", "--helm-set", "a=b")
	if err != nil || out != "application 'web' created\n" {
		t.Fatalf("create from flags: %q, %v", out, err)
	}
	web := get("argocd", "web")
	wantSpec := v1alpha1.ApplicationSpec{
		Project:     "default",
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/a.git", Path: "apps/web", Helm: &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "a", Value: "b"}}}},
		Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"},
		SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}},
	}
	if diff := cmp.Diff(wantSpec, web.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	if web.Labels["team"] != "a" || web.Annotations["note"] != "x" || strings.Join(web.Finalizers, ",") != v1alpha1.ResourcesFinalizerName {
		t.Errorf("metadata: labels %v, annotations %v, finalizers %v", web.Labels, web.Annotations, web.Finalizers)
	}

	for _, tc := range []struct {
		name, wantOut, wantErr string
		args                   []string
	}{
		{name: "from a file", args: []string{"-f", file}, wantOut: "application 'guestbook' created\n"},
		{name: "the same again", args: []string{"-f", file}, wantOut: "application 'guestbook' unchanged\n"},
		{name: "another spec", args: []string{"-f", file, "--revision", "v2"}, wantErr: "existing application spec is different, use upsert flag to force update"},
		{name: "another spec, upserted", args: []string{"-f", file, "--revision", "v2", "--upsert", "-l", "tier=web"}, wantOut: "application 'guestbook' updated\n"},
		{name: "name not the file's", args: []string{"other", "-f", file}, wantErr: "app name 'other' does not match app spec metadata.name 'guestbook'"},
		{name: "in another namespace", args: []string{"team-a/api", "--repo", "https://git.example.com/a.git", "--dest-name", "in-cluster"}, wantOut: "application 'api' created\n"},
		{name: "no name", args: []string{"--repo", "x"}, wantErr: "name the Application: tollgate app create NAME, or -f FILE"},
		{name: "--name not the argument", args: []string{"a", "--name", "b"}, wantErr: "--name argument 'b' does not match app name a"},
		{name: "bad label", args: []string{"x", "-l", "team"}, wantErr: "--label: labels should have key=value, but instead got: team"},
		{name: "missing file", args: []string{"-f", filepath.Join(dir, "nope.yaml")}, wantErr: "--file: open " + filepath.Join(dir, "nope.yaml") + ": no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(tc.args...)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || exitCode(err) != exitUsage {
					t.Fatalf("error = %v (exit %d), want %q (exit 2)", err, exitCode(err), tc.wantErr)
				}
				return
			}
			if err != nil || out != tc.wantOut {
				t.Fatalf("got %q, %v; want %q", out, err, tc.wantOut)
			}
		})
	}
	gb := get("argocd", "guestbook")
	if gb.Spec.Source.TargetRevision != "v2" || gb.Labels["team"] != "a" || gb.Labels["tier"] != "web" {
		t.Errorf("upserted: revision %q, labels %v", gb.Spec.Source.TargetRevision, gb.Labels)
	}
	get("team-a", "api")
}

// TestReadApps: -f takes several documents and refuses other kinds.
func TestReadApps(t *testing.T) {
	two := guestbookYAML + "---\n" + strings.ReplaceAll(guestbookYAML, "name: guestbook", "name: second")
	apps, err := readApps(strings.NewReader(two), "apps.yaml")
	if err != nil || len(apps) != 2 || apps[1].Name != "second" {
		t.Fatalf("two documents: %d apps, %v", len(apps), err)
	}
	_, err = readApps(strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), "cm.yaml")
	if err == nil || err.Error() != "cm.yaml (document 1): kind ConfigMap: want Application" || exitCode(err) != exitUsage {
		t.Errorf("other kind: %v", err)
	}
	if _, err := readApps(strings.NewReader(""), "stdin"); err == nil || err.Error() != "stdin: no Application" {
		t.Errorf("empty: %v", err)
	}
}

// TestUnsetApp: argocd app unset's flags remove what they name; a flag of
// another kind is nothing to unset.
func TestUnsetApp(t *testing.T) {
	helm := &v1alpha1.Application{}
	helm.Name, helm.Namespace = "helm", "argocd"
	helm.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: "https://charts.example.com", Chart: "web", Ref: "values", Helm: &v1alpha1.ApplicationSourceHelm{
		Parameters: []v1alpha1.HelmParameter{{Name: "a", Value: "1"}, {Name: "b", Value: "2"}}, ValueFiles: []string{"v1.yaml", "v2.yaml"}, Values: "x: 1", PassCredentials: true}}
	kust := &v1alpha1.Application{}
	kust.Name, kust.Namespace = "kust", "argocd"
	kust.Spec.Sources = []v1alpha1.ApplicationSource{{RepoURL: "https://git.example.com/a.git"}, {RepoURL: "https://git.example.com/k.git", Kustomize: &v1alpha1.ApplicationSourceKustomize{
		NamePrefix: "p-", Images: []string{"web:v1", "db=postgres:16"}, Replicas: []v1alpha1.KustomizeReplica{{Name: "web"}}}}}
	for _, tc := range []struct {
		name    string
		o       appUnsetOptions
		want    *v1alpha1.ApplicationSource
		wantErr string
	}{
		{name: "helm", o: appUnsetOptions{appTarget: appTarget{name: "helm"}, parameters: []string{"a"}, valuesFiles: []string{"v2.yaml"}, valuesLiteral: true, passCredentials: true, ref: true},
			want: &v1alpha1.ApplicationSource{RepoURL: "https://charts.example.com", Chart: "web", Helm: &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "b", Value: "2"}}, ValueFiles: []string{"v1.yaml"}}}},
		{name: "kustomize of source 2", o: appUnsetOptions{appTarget: appTarget{name: "kust"}, position: 2, namePrefix: true, kustomizeImages: []string{"web"}, kustomizeReplicas: []string{"web"}},
			want: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/k.git", Kustomize: &v1alpha1.ApplicationSourceKustomize{Images: []string{"db=postgres:16"}}}},
		{name: "kustomize flag on a helm source", o: appUnsetOptions{appTarget: appTarget{name: "helm"}, position: -1, namePrefix: true},
			wantErr: "nothing to unset: no flag names an override of the source's kind (see tollgate app unset --help)"},
		{name: "multi-source without a position", o: appUnsetOptions{appTarget: appTarget{name: "kust"}, position: -1, namePrefix: true},
			wantErr: "Source position should be specified and must be greater than 0 for applications with multiple sources"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeAppClient(t, helm.DeepCopy(), kust.DeepCopy())
			tc.o.namespace = "argocd"
			if tc.o.position == 0 && tc.o.appTarget.name == "helm" {
				tc.o.position = -1
			}
			err := unsetApp(t.Context(), c, tc.o)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || exitCode(err) != exitUsage {
					t.Fatalf("error = %v (exit %d), want %q", err, exitCode(err), tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got v1alpha1.Application
			if err := c.Get(t.Context(), types.NamespacedName{Namespace: "argocd", Name: tc.o.appTarget.name}, &got); err != nil {
				t.Fatal(err)
			}
			src := got.Spec.Source
			if got.Spec.HasMultipleSources() {
				src = &got.Spec.Sources[1]
			}
			if diff := cmp.Diff(tc.want, src); diff != "" {
				t.Errorf("source (-want +got):\n%s", diff)
			}
		})
	}
}
