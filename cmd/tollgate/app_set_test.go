package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// parseSetFlags parses args as app set's flags.
func parseSetFlags(t *testing.T, args ...string) (appSetOptions, *pflag.FlagSet) {
	t.Helper()
	o := appSetOptions{}
	f := pflag.NewFlagSet("set", pflag.ContinueOnError)
	o.addFlags(f)
	addAppSpecFlags(f, &o.spec)
	f.IntVar(&o.position, "source-position", -1, "")
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
	o.appTarget.name, o.namespace, o.changed = "web", "argocd", f.Changed
	o.syncPolicy, o.selfHeal, o.autoPrune = o.spec.syncPolicy, o.spec.selfHeal, o.spec.autoPrune
	o.spec.readFile = func(p string) ([]byte, error) {
		if p == "values.yaml" {
			return []byte("replicas: 3\n"), nil
		}
		return nil, errors.New("open " + p + ": no such file or directory")
	}
	return o, f
}

func setTestApps() []*v1alpha1.Application {
	single := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argocd"}}
	single.Spec.Project = "default"
	single.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/a.git", Path: "apps/web", TargetRevision: "main"}
	single.Spec.Destination = v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"}
	single.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true}, SyncOptions: []string{"CreateNamespace=true"}}
	multi := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "multi", Namespace: "argocd"}}
	multi.Spec.Project = "default"
	multi.Spec.Sources = []v1alpha1.ApplicationSource{
		{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "1.0.0", Name: "chart"},
		{RepoURL: "https://git.example.com/k.git", Path: "overlays/dev", Name: "kustomize", Kustomize: &v1alpha1.ApplicationSourceKustomize{Images: []string{"web:v1"}}},
	}
	return []*v1alpha1.Application{single, multi}
}

// TestSetAppSpec: each of argocd app set's flags sets its field as
// argocd's SetAppSpecOptions does, on the source --source-position names.
func TestSetAppSpec(t *testing.T) {
	src := func(edit func(*v1alpha1.ApplicationSource)) *v1alpha1.ApplicationSource {
		s := &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/a.git", Path: "apps/web", TargetRevision: "main"}
		edit(s)
		return s
	}
	tests := []struct {
		name    string
		app     string
		args    []string
		check   func(t *testing.T, got v1alpha1.ApplicationSpec)
		wantErr string
	}{
		{name: "repo, path, revision, destination, project", app: "web",
			args: []string{"--repo", "https://git.example.com/b.git", "--path", "apps/api", "--revision", "v2", "--dest-name", "prod", "--dest-namespace", "api", "--project", "team-a", "--revision-history-limit", "3"},
			check: func(t *testing.T, got v1alpha1.ApplicationSpec) {
				want := &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/b.git", Path: "apps/api", TargetRevision: "v2"}
				if diff := cmp.Diff(want, got.Source); diff != "" {
					t.Errorf("source (-want +got):\n%s", diff)
				}
				wantDest := v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Name: "prod", Namespace: "api"}
				if diff := cmp.Diff(wantDest, got.Destination); diff != "" || got.Project != "team-a" || *got.RevisionHistoryLimit != 3 {
					t.Errorf("destination (-want +got):\n%s\nproject %q, limit %d", diff, got.Project, *got.RevisionHistoryLimit)
				}
			}},
		{name: "helm", app: "web",
			args: []string{"--helm-set", "image.tag=v2", "--helm-set", "hosts={a,b}", "--helm-set-string", "port=80", "--helm-set-file", "cfg=files/cfg.json", "--values", "values-prod.yaml", "--release-name", "web-prod", "--values-literal-file", "values.yaml", "--helm-skip-crds", "-p", "image.tag=v3"},
			check: func(t *testing.T, got v1alpha1.ApplicationSpec) {
				want := src(func(s *v1alpha1.ApplicationSource) {
					s.Helm = &v1alpha1.ApplicationSourceHelm{
						ValueFiles:     []string{"values-prod.yaml"},
						ReleaseName:    "web-prod",
						SkipCrds:       true,
						ValuesObject:   &runtime.RawExtension{Raw: []byte(`{"replicas":3}`)},
						Parameters:     []v1alpha1.HelmParameter{{Name: "image.tag", Value: "v3"}, {Name: "hosts", Value: `{a\,b}`}, {Name: "port", Value: "80", ForceString: true}},
						FileParameters: []v1alpha1.HelmFileParameter{{Name: "cfg", Path: "files/cfg.json"}},
					}
				})
				if diff := cmp.Diff(want, got.Source); diff != "" {
					t.Errorf("source (-want +got):\n%s", diff)
				}
			}},
		{name: "kustomize", app: "web",
			args: []string{"--nameprefix", "p-", "--namesuffix", "-s", "--kustomize-image", "web:v2", "--kustomize-image", "db=postgres:16", "--kustomize-replica", "web=3", "--kustomize-common-label", "team=a", "--kustomize-namespace", "web", "--kustomize-force-common-label"},
			check: func(t *testing.T, got v1alpha1.ApplicationSpec) {
				want := src(func(s *v1alpha1.ApplicationSource) {
					s.Kustomize = &v1alpha1.ApplicationSourceKustomize{NamePrefix: "p-", NameSuffix: "-s", Images: []string{"web:v2", "db=postgres:16"},
						Replicas: []v1alpha1.KustomizeReplica{{Name: "web", Count: intstr.FromInt32(3)}}, CommonLabels: map[string]string{"team": "a"}, Namespace: "web", ForceCommonLabels: true}
				})
				if diff := cmp.Diff(want, got.Source); diff != "" {
					t.Errorf("source (-want +got):\n%s", diff)
				}
			}},
		{name: "directory, jsonnet and plugin", app: "web",
			args: []string{"--directory-recurse", "--directory-include", "*.yaml", "--jsonnet-tla-str", "env=prod", "--jsonnet-ext-var-code", "n=1", "--plugin-env", "FOO=bar"},
			check: func(t *testing.T, got v1alpha1.ApplicationSpec) {
				d := got.Source.Directory
				if d == nil || !d.Recurse || d.Include != "*.yaml" || d.Jsonnet == nil ||
					string(d.Jsonnet.Raw) != `{"extVars":[{"code":true,"name":"n","value":"1"}],"tlas":[{"code":false,"name":"env","value":"prod"}]}` {
					t.Errorf("directory = %+v (jsonnet %s)", d, d.Jsonnet.Raw)
				}
				if diff := cmp.Diff(&v1alpha1.ApplicationSourcePlugin{Env: []v1alpha1.EnvEntry{{Name: "FOO", Value: "bar"}}}, got.Source.Plugin); diff != "" {
					t.Errorf("plugin (-want +got):\n%s", diff)
				}
			}},
		{name: "sync options and retry", app: "web",
			args: []string{"--sync-option", "ServerSideApply=true", "--sync-option", "!CreateNamespace=true", "--sync-retry-limit", "4", "--sync-retry-backoff-duration", "10s"},
			check: func(t *testing.T, got v1alpha1.ApplicationSpec) {
				want := &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true}, SyncOptions: []string{"ServerSideApply=true"},
					Retry: &v1alpha1.RetryStrategy{Limit: 4, Backoff: &v1alpha1.Backoff{Duration: "10s", MaxDuration: "3m0s", Factor: ptr.To[int64](2)}}}
				if diff := cmp.Diff(want, got.SyncPolicy); diff != "" {
					t.Errorf("sync policy (-want +got):\n%s", diff)
				}
			}},
		{name: "the brake with another field keeps prune and selfHeal", app: "web",
			args: []string{"--sync-policy", "automated", "--self-heal=false", "--revision", "v3"},
			check: func(t *testing.T, got v1alpha1.ApplicationSpec) {
				if diff := cmp.Diff(&v1alpha1.SyncPolicyAutomated{Prune: true}, got.SyncPolicy.Automated); diff != "" || got.Source.TargetRevision != "v3" {
					t.Errorf("automated (-want +got):\n%s\nrevision %q", diff, got.Source.TargetRevision)
				}
			}},
		{name: "source position", app: "multi",
			args: []string{"--source-position", "2", "--path", "overlays/prod", "--kustomize-image", "web:v2"},
			check: func(t *testing.T, got v1alpha1.ApplicationSpec) {
				want := setTestApps()[1].Spec.Sources
				want[1].Path, want[1].Kustomize.Images = "overlays/prod", []string{"web:v2"}
				if diff := cmp.Diff(want, got.Sources); diff != "" {
					t.Errorf("sources (-want +got):\n%s", diff)
				}
			}},
		{name: "source name", app: "multi",
			args: []string{"--source-name", "chart", "--revision", "2.0.0", "--helm-set", "a=b"},
			check: func(t *testing.T, got v1alpha1.ApplicationSpec) {
				if s := got.Sources[0]; s.TargetRevision != "2.0.0" || s.Helm == nil || s.Helm.Parameters[0].Value != "b" {
					t.Errorf("source 1 = %+v", s)
				}
			}},
		{name: "multi-source without a position", app: "multi", args: []string{"--path", "x"},
			wantErr: "Source position should be specified and must be greater than 0 for applications with multiple sources"},
		{name: "position past the sources", app: "multi", args: []string{"--source-position", "3", "--path", "x"},
			wantErr: "Source position should be less than the number of sources in the application"},
		{name: "unknown source name", app: "multi", args: []string{"--source-name", "nope", "--path", "x"}, wantErr: "Unknown source name 'nope'"},
		{name: "bad helm-set", app: "web", args: []string{"--path", "x", "--helm-set", "novalue"},
			wantErr: "--helm-set: expected helm parameter of the form param=value but received: novalue"},
		{name: "missing values file", app: "web", args: []string{"--values-literal-file", "nope.yaml"},
			wantErr: "--values-literal-file: read values: open nope.yaml: no such file or directory"},
		{name: "bad replica", app: "web", args: []string{"--kustomize-replica", "web=many"}, wantErr: "--kustomize-replica: expected integer value for count. Received: many"},
		{name: "bad sync policy", app: "web", args: []string{"--path", "x", "--sync-policy", "sometimes"}, wantErr: `invalid --sync-policy "sometimes": want none or automated`},
		{name: "parameters on a kustomize source", app: "multi", args: []string{"--source-position", "2", "-p", "a=b"},
			wantErr: "--parameter: parameters can only be set against Helm applications"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeAppClient(t, setTestApps()...)
			o, f := parseSetFlags(t, tc.args...)
			o.appTarget.name = tc.app
			err := setAppSpec(t.Context(), c, o, f)
			var got v1alpha1.Application
			if gerr := c.Get(t.Context(), types.NamespacedName{Namespace: "argocd", Name: tc.app}, &got); gerr != nil {
				t.Fatal(gerr)
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || exitCode(err) != exitUsage {
					t.Fatalf("error = %v (exit %d), want %q (exit 2)", err, exitCode(err), tc.wantErr)
				}
				if got.ResourceVersion != "999" {
					t.Errorf("refused, but the Application was written (resourceVersion %s)", got.ResourceVersion)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, got.Spec)
		})
	}
}

// TestSetAutomatedFlagsAlone: --self-heal, --auto-prune or --allow-empty
// on an Application without automated sync add it disabled, as argocd.
func TestSetAutomatedFlagsAlone(t *testing.T) {
	apps := setTestApps()
	apps[0].Spec.SyncPolicy = nil
	c := fakeAppClient(t, apps...)
	o, f := parseSetFlags(t, "--allow-empty", "--path", "apps/x")
	if err := setAppSpec(t.Context(), c, o, f); err != nil {
		t.Fatal(err)
	}
	var got v1alpha1.Application
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: "argocd", Name: "web"}, &got); err != nil {
		t.Fatal(err)
	}
	want := &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{AllowEmpty: true, Enabled: ptr.To(false)}}
	if diff := cmp.Diff(want, got.Spec.SyncPolicy); diff != "" {
		t.Errorf("sync policy (-want +got):\n%s", diff)
	}
	if given := specFlagsGiven(f); strings.Join(given, ",") != "allow-empty,path" {
		t.Errorf("specFlagsGiven = %v", given)
	}
}
