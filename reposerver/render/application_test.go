package render

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

func TestApplicationOptions(t *testing.T) {
	refs := map[string]string{"values": "/checkouts/values"}
	tests := []struct {
		name  string
		src   v1alpha1.ApplicationSource
		field string
		// kubeVersion is the destination cluster's.
		kubeVersion string
		want        Options
		wantErr     string
	}{
		{
			name: "plain",
			want: Options{Namespace: "web", AppName: "guestbook", Refs: refs},
		},
		{
			// Argo CD's ValuesYAML: valuesObject, null too, replaces values.
			name: "helm values beside valuesObject are not read",
			src: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{
				Values: "replicas: 1\n", ValuesObject: &runtime.RawExtension{Raw: []byte(`{"replicas":3}`)},
			}},
			want: Options{Namespace: "web", AppName: "guestbook", Refs: refs, Type: KindHelm, Helm: &HelmOptions{ValuesObject: map[string]any{"replicas": float64(3)}}},
		},
		{
			name: "helm values beside a null valuesObject are not read",
			src:  v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{Values: "replicas: 1\n", ValuesObject: &runtime.RawExtension{Raw: []byte(`null`)}}},
			want: Options{Namespace: "web", AppName: "guestbook", Refs: refs, Type: KindHelm, Helm: &HelmOptions{}},
		},
		{
			name: "helm values alone",
			src:  v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{Values: "replicas: 1\n"}},
			want: Options{Namespace: "web", AppName: "guestbook", Refs: refs, Type: KindHelm, Helm: &HelmOptions{Values: "replicas: 1\n"}},
		},
		{
			name: "helm options",
			src: v1alpha1.ApplicationSource{
				Helm: &v1alpha1.ApplicationSourceHelm{
					ValueFiles: []string{"prod.yaml", "$values/envs/prod.yaml"}, ReleaseName: "gb", IgnoreMissingValueFiles: true, Version: "v3",
					Parameters:   []v1alpha1.HelmParameter{{Name: "a", Value: "1", ForceString: true}},
					ValuesObject: &runtime.RawExtension{Raw: []byte(`{"replicas":3}`)},
				},
			},
			want: Options{
				Namespace: "web", AppName: "guestbook", Refs: refs, Type: KindHelm,
				Helm: &HelmOptions{
					ValueFiles: []string{"prod.yaml", "$values/envs/prod.yaml"}, ReleaseName: "gb", IgnoreMissingValueFiles: true,
					Parameters:   []HelmParameter{{Name: "a", Value: "1", ForceString: true}},
					ValuesObject: map[string]any{"replicas": float64(3)},
				},
			},
		},
		{
			// Argo CD's ExplicitType refuses more than one block.
			name: "directory, kustomize and helm blocks together", field: "spec.sources[2]",
			src: v1alpha1.ApplicationSource{
				Directory: &v1alpha1.ApplicationSourceDirectory{Recurse: true},
				Kustomize: &v1alpha1.ApplicationSourceKustomize{NamePrefix: "p-"},
				Helm:      &v1alpha1.ApplicationSourceHelm{ReleaseName: "gb"},
			},
			wantErr: "spec.sources[2]: multiple application sources defined: Kustomize,Helm,Directory",
		},
		{
			// Argo CD's getPluginEnvs: build variables, KUBE_*, the env
			// entries expanded, then the parameters.
			name: "plugin: named, env expanded, parameters", kubeVersion: "v1.31.2+k3s1",
			src: v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/shop.git", Path: "apps/web", TargetRevision: "main",
				Plugin: &v1alpha1.ApplicationSourcePlugin{
					Name: "vault-v1.0",
					Env:  []v1alpha1.EnvEntry{{Name: "REV", Value: "$ARGOCD_APP_REVISION_SHORT-${KUBE_VERSION}$$"}, {Name: "lower", Value: "x"}},
					Parameters: []v1alpha1.ApplicationSourcePluginParameter{
						{Name: "image-tag", String: new("1.2")},
						{Name: "labels", Map: map[string]string{"b": "2", "a.x": "1"}},
						{Name: "args", Array: []string{"--x", "--y"}},
						{Name: "empty", Map: map[string]string{}},
					},
				}},
			want: Options{Namespace: "web", AppName: "guestbook", Refs: refs, Type: KindPlugin, Plugin: &PluginOptions{Name: "vault-v1.0", Env: []string{
				"ARGOCD_APP_NAME=guestbook", "ARGOCD_APP_NAMESPACE=web", "ARGOCD_APP_PROJECT_NAME=shop",
				"ARGOCD_APP_REVISION=0123456789abcdef", "ARGOCD_APP_REVISION_SHORT=0123456", "ARGOCD_APP_REVISION_SHORT_8=01234567",
				"ARGOCD_APP_SOURCE_REPO_URL=https://git.example.com/shop.git", "ARGOCD_APP_SOURCE_PATH=apps/web", "ARGOCD_APP_SOURCE_TARGET_REVISION=main",
				"KUBE_VERSION=1.31.2", "KUBE_API_VERSIONS=",
				"ARGOCD_ENV_REV=0123456-1.31.2$", "ARGOCD_ENV_lower=x",
				`ARGOCD_APP_PARAMETERS=[{"name":"image-tag","string":"1.2"},{"map":{"a.x":"1","b":"2"},"name":"labels"},{"array":["--x","--y"],"name":"args"},{"map":{},"name":"empty"}]`,
				"PARAM_IMAGE_TAG=1.2", "PARAM_LABELS_A_X=1", "PARAM_LABELS_B=2", "PARAM_ARGS_0=--x", "PARAM_ARGS_1=--y",
			}}, Capabilities: &Capabilities{KubeVersion: "1.31.2"}},
		},
		{name: "plugin without anything: discovery, parameters null", src: v1alpha1.ApplicationSource{Plugin: &v1alpha1.ApplicationSourcePlugin{}},
			want: Options{Namespace: "web", AppName: "guestbook", Refs: refs, Type: KindPlugin, Plugin: &PluginOptions{Env: []string{
				"ARGOCD_APP_NAME=guestbook", "ARGOCD_APP_NAMESPACE=web", "ARGOCD_APP_PROJECT_NAME=shop",
				"ARGOCD_APP_REVISION=0123456789abcdef", "ARGOCD_APP_REVISION_SHORT=0123456", "ARGOCD_APP_REVISION_SHORT_8=01234567",
				"ARGOCD_APP_SOURCE_REPO_URL=", "ARGOCD_APP_SOURCE_PATH=", "ARGOCD_APP_SOURCE_TARGET_REVISION=",
				"KUBE_VERSION=", "KUBE_API_VERSIONS=", "ARGOCD_APP_PARAMETERS=null",
			}}}},
		{name: "plugin and helm blocks together", src: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{}, Plugin: &v1alpha1.ApplicationSourcePlugin{}},
			wantErr: "spec.source: multiple application sources defined: Helm,Plugin"},
		{
			name: "jsonnet, values substituted",
			src: v1alpha1.ApplicationSource{Directory: &v1alpha1.ApplicationSourceDirectory{Jsonnet: &runtime.RawExtension{Raw: []byte(
				`{"tlas":[{"name":"rev","value":"$ARGOCD_APP_REVISION_SHORT"},{"name":"n","value":"1+1","code":true}],"extVars":[{"name":"app","value":"${ARGOCD_APP_NAME}"}],"libs":["vendor"]}`)}}},
			want: Options{Namespace: "web", AppName: "guestbook", Refs: refs, Directory: &DirectoryOptions{Jsonnet: JsonnetOptions{
				TLAs:    []JsonnetVar{{Name: "rev", Value: "0123456"}, {Name: "n", Value: "1+1", Code: true}},
				ExtVars: []JsonnetVar{{Name: "app", Value: "guestbook"}},
				Libs:    []string{"vendor"},
			}}},
		},
		{name: "jsonnet variable without a name", src: v1alpha1.ApplicationSource{Directory: &v1alpha1.ApplicationSourceDirectory{Jsonnet: &runtime.RawExtension{Raw: []byte(`{"extVars":[{"value":"x"}]}`)}}}, wantErr: "spec.source.directory.jsonnet.extVars[0].name: must not be empty"},
		{name: "jsonnet of the wrong shape", src: v1alpha1.ApplicationSource{Directory: &v1alpha1.ApplicationSourceDirectory{Jsonnet: &runtime.RawExtension{Raw: []byte(`{"tlas":"x"}`)}}}, wantErr: "spec.source.directory.jsonnet: json: cannot unmarshal string"},
		{name: "empty jsonnet", src: v1alpha1.ApplicationSource{Directory: &v1alpha1.ApplicationSourceDirectory{Jsonnet: &runtime.RawExtension{Raw: []byte(`{}`)}}}, want: Options{Namespace: "web", AppName: "guestbook", Refs: refs, Directory: &DirectoryOptions{}}},
		{
			name: "every kustomize option, build variables substituted as in Argo CD",
			src: v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/shop.git", Path: "apps/web", TargetRevision: "main",
				Kustomize: &v1alpha1.ApplicationSourceKustomize{
					Images:                    []string{"web=web:${ARGOCD_APP_REVISION_SHORT}"},
					CommonLabels:              map[string]string{"app": "$ARGOCD_APP_NAME", "cost": "$$5"},
					CommonAnnotations:         map[string]string{"rev": "$ARGOCD_APP_REVISION"},
					Replicas:                  []v1alpha1.KustomizeReplica{{Name: "web", Count: intstr.FromInt32(3)}, {Name: "db", Count: intstr.FromString("2")}},
					Patches:                   []v1alpha1.KustomizePatch{{Patch: "p", Target: &v1alpha1.KustomizeSelector{Kind: "Deployment", LabelSelector: "a=b"}, Options: map[string]bool{"allowNameChange": true}}},
					Components:                []string{"../c"},
					IgnoreMissingComponents:   true,
					ForceCommonLabels:         true,
					ForceCommonAnnotations:    true,
					LabelWithoutSelector:      true,
					LabelIncludeTemplates:     true,
					KubeVersion:               "1.33",
					APIVersions:               []string{"v1"},
					CommonAnnotationsEnvsubst: false,
				}},
			want: Options{
				Namespace: "web", AppName: "guestbook", Refs: refs,
				Kustomize: &KustomizeOptions{
					Images:            []string{"web=web:0123456"},
					CommonLabels:      map[string]string{"app": "guestbook", "cost": "$5"},
					CommonAnnotations: map[string]string{"rev": "$ARGOCD_APP_REVISION"},
					Replicas:          []KustomizeReplica{{Name: "web", Count: 3}, {Name: "db", Count: 2}},
					Patches:           []KustomizePatch{{Patch: "p", Target: &KustomizeTarget{Kind: "Deployment", LabelSelector: "a=b"}, Options: map[string]bool{"allowNameChange": true}}},
					Components:        []string{"../c"}, IgnoreMissingComponents: true,
					ForceCommonLabels: true, ForceCommonAnnotations: true, LabelWithoutSelector: true, LabelIncludeTemplates: true,
				},
				Capabilities: &Capabilities{KubeVersion: "1.33", APIVersions: []string{"v1"}},
			},
		},
		{
			name: "kustomize commonAnnotationsEnvsubst",
			src: v1alpha1.ApplicationSource{Kustomize: &v1alpha1.ApplicationSourceKustomize{
				CommonAnnotations: map[string]string{"p": "${ARGOCD_APP_PROJECT_NAME}/${ARGOCD_APP_NAMESPACE}/$UNKNOWN"}, CommonAnnotationsEnvsubst: true,
			}},
			want: Options{Namespace: "web", AppName: "guestbook", Refs: refs, Kustomize: &KustomizeOptions{CommonAnnotations: map[string]string{"p": "shop/web/"}}},
		},
		{
			name: "helm parameters and value files substituted, ref prefixes kept",
			src: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{
				ValueFiles: []string{"values-$ARGOCD_APP_NAME.yaml", "$values/envs/$ARGOCD_APP_NAMESPACE.yaml", "$ARGOCD_APP_NAMESPACE/x.yaml"},
				Parameters: []v1alpha1.HelmParameter{{Name: "image.tag", Value: "${ARGOCD_APP_REVISION_SHORT_8}"}},
			}},
			want: Options{Namespace: "web", AppName: "guestbook", Refs: refs, Helm: &HelmOptions{
				ValueFiles: []string{"values-guestbook.yaml", "$values/envs/web.yaml", "web/x.yaml"},
				Parameters: []HelmParameter{{Name: "image.tag", Value: "01234567"}},
			}},
		},
		{name: "kustomize version", src: v1alpha1.ApplicationSource{Kustomize: &v1alpha1.ApplicationSourceKustomize{Version: "v5.4.0"}}, wantErr: "spec.source.kustomize.version is not supported: tollgate builds with the kustomize library it embeds"},
		{name: "kustomize replica count not a number", field: "spec.sources[1]", src: v1alpha1.ApplicationSource{Kustomize: &v1alpha1.ApplicationSourceKustomize{Replicas: []v1alpha1.KustomizeReplica{{Name: "web", Count: intstr.FromString("two")}}}}, wantErr: "spec.sources[1].kustomize.replicas[0].count: expected integer value for count. Received: two"},
		{name: "kustomize includeTemplates without labelWithoutSelector", src: v1alpha1.ApplicationSource{Kustomize: &v1alpha1.ApplicationSourceKustomize{LabelIncludeTemplates: true}}, wantErr: "spec.source.kustomize.labelIncludeTemplates: needs labelWithoutSelector"},
		{name: "kustomize empty patch", src: v1alpha1.ApplicationSource{Kustomize: &v1alpha1.ApplicationSourceKustomize{Patches: []v1alpha1.KustomizePatch{{}}}}, wantErr: "spec.source.kustomize.patches[0]: set path or patch"},
		{
			name: "helm file parameters, skipTests, skipSchemaValidation",
			src: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{
				FileParameters: []v1alpha1.HelmFileParameter{{Name: "a", Path: "files/$ARGOCD_APP_NAME.conf"}, {Name: "b", Path: "$values/b.conf"}},
				SkipTests:      true, SkipSchemaValidation: true,
			}},
			want: Options{Namespace: "web", AppName: "guestbook", Refs: refs, Helm: &HelmOptions{
				FileParameters: []HelmFileParameter{{Name: "a", Path: "files/guestbook.conf"}, {Name: "b", Path: "$values/b.conf"}},
				SkipTests:      true, SkipSchemaValidation: true,
			}},
		},
		{name: "remote file parameter", src: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{FileParameters: []v1alpha1.HelmFileParameter{{Name: "a", Path: "https://example.com/a"}}}}, wantErr: "spec.source.helm.fileParameters[0].path is not supported: remote files"},
		{name: "helm v2", src: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{Version: "v2"}}, wantErr: "spec.source.helm.version is not supported"},
		{
			name: "helm kubeVersion and apiVersions override the cluster's",
			src:  v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{KubeVersion: "v1.30.4-gke.1", APIVersions: []string{"monitoring.coreos.com/v1"}}},
			want: Options{Namespace: "web", AppName: "guestbook", Refs: refs, Helm: &HelmOptions{},
				Capabilities: &Capabilities{KubeVersion: "1.30.4", APIVersions: []string{"monitoring.coreos.com/v1"}}},
		},
		{
			name: "destination cluster's version, normalised", kubeVersion: "v1.37.2+k3s1",
			src:  v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{}},
			want: Options{Namespace: "web", AppName: "guestbook", Refs: refs, Helm: &HelmOptions{}, Capabilities: &Capabilities{KubeVersion: "1.37.2"}},
		},
		{name: "bad helm kubeVersion", src: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{KubeVersion: "one"}}, wantErr: "spec.source.helm.kubeVersion: could not parse kubernetes version one"},
		{name: "remote value file", src: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"a.yaml", "https://example.com/v.yaml"}}}, wantErr: "spec.source.helm.valueFiles[1] is not supported: remote value files"},
		{name: "unknown ref", src: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"$other/x.yaml"}}}, wantErr: `spec.source.helm.valueFiles[0]: no source of the application has ref "other"`},
		{name: "bad valuesObject", src: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{ValuesObject: &runtime.RawExtension{Raw: []byte(`[1]`)}}}, wantErr: "spec.source.helm.valuesObject: want an object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			field := tc.field
			if field == "" {
				field = "spec.source"
			}
			got, err := ApplicationOptions(AppInfo{Name: "guestbook", Namespace: "web", Project: "shop", KubeVersion: tc.kubeVersion}, AppSource{Field: field, Source: tc.src}, "0123456789abcdef", refs)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The explicit type is TestExplicitType's.
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "Type")); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplicationOptionsUnsupportedIsTyped(t *testing.T) {
	_, err := ApplicationOptions(AppInfo{Name: "a", Namespace: "b"}, AppSource{Field: "spec.source", Source: v1alpha1.ApplicationSource{Kustomize: &v1alpha1.ApplicationSourceKustomize{Version: "v5.4.0"}}}, "", nil)
	var ue *UnsupportedError
	if !errors.As(err, &ue) || ue.Field != "spec.source.kustomize.version" {
		t.Fatalf("error = %#v, want an *UnsupportedError for spec.source.kustomize.version", err)
	}
}

func TestApplicationSources(t *testing.T) {
	one := v1alpha1.ApplicationSource{RepoURL: "a"}
	two := v1alpha1.ApplicationSource{RepoURL: "b", Ref: "values"}
	got := ApplicationSources(v1alpha1.ApplicationSpec{Source: &one, Sources: []v1alpha1.ApplicationSource{one, two}})
	want := []AppSource{{Field: "spec.sources[0]", Source: one}, {Field: "spec.sources[1]", Source: two}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	if !got[1].RefOnly(2) || got[0].RefOnly(2) || (AppSource{Source: two}).RefOnly(1) {
		t.Error("RefOnly: want only a ref source among several to be ref-only")
	}
	if got := ApplicationSources(v1alpha1.ApplicationSpec{Source: &one}); len(got) != 1 || got[0].Field != "spec.source" {
		t.Errorf("single source = %v", got)
	}
	if got := ApplicationSources(v1alpha1.ApplicationSpec{}); got != nil {
		t.Errorf("no source = %v, want nil", got)
	}
}

// writeTree writes files (slash paths) under a new temporary directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestBuildHelmValueFiles(t *testing.T) {
	chartRepo := writeTree(t, map[string]string{
		"chart/Chart.yaml":            "apiVersion: v2\nname: dump\nversion: 0.1.0\n",
		"chart/templates/values.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: values}\ndata: {values: {{ toJson .Values | quote }}}\n",
		"chart/values-prod.yaml":      "replicas: 2\nimage: {tag: local}\n",
		"shared/common.yaml":          "team: web\n",
	})
	valuesRepo := writeTree(t, map[string]string{"envs/prod.yaml": "image: {tag: \"1.2\"}\nregion: eu\n"})
	outside := writeTree(t, map[string]string{"secret.yaml": "stolen: true\n"})
	if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(valuesRepo, "envs", "escape.yaml")); err != nil {
		t.Fatal(err)
	}
	refs := map[string]string{"values": valuesRepo}
	tests := []struct {
		name    string
		helm    HelmOptions
		want    map[string]any
		wantErr string
	}{
		{
			name: "ref files merged in order with local, absolute, values and valuesObject, then parameters",
			helm: HelmOptions{
				ValueFiles:   []string{"values-prod.yaml", "/shared/common.yaml", "$values/envs/prod.yaml"},
				Values:       "region: us\n",
				ValuesObject: map[string]any{"extra": true},
				Parameters:   []HelmParameter{{Name: "team", Value: "ops"}},
			},
			want: map[string]any{"replicas": float64(2), "team": "ops", "region": "us", "extra": true, "image": map[string]any{"tag": "1.2"}},
		},
		{
			name: "missing files skipped with ignoreMissingValueFiles",
			helm: HelmOptions{ValueFiles: []string{"nope.yaml", "$values/envs/none.yaml", "$values/envs/prod.yaml"}, IgnoreMissingValueFiles: true},
			want: map[string]any{"image": map[string]any{"tag": "1.2"}, "region": "eu"},
		},
		{name: "missing file", helm: HelmOptions{ValueFiles: []string{"$values/envs/none.yaml"}}, wantErr: "read value file $values/envs/none.yaml"},
		{name: "unknown ref", helm: HelmOptions{ValueFiles: []string{"$other/x.yaml"}}, wantErr: `no source of the application has ref "other"`},
		{name: "symlink out of the repository", helm: HelmOptions{ValueFiles: []string{"$values/envs/escape.yaml"}}, wantErr: "read value file $values/envs/escape.yaml: symlink target is outside the repository root"},
		{name: "dot-dot out of the repository", helm: HelmOptions{ValueFiles: []string{"$values/../../secret.yaml"}}, wantErr: "outside the repository root"},
		{name: "dot-dot out of the repository, ignoring missing files", helm: HelmOptions{ValueFiles: []string{"../../secret.yaml"}, IgnoreMissingValueFiles: true}, wantErr: "outside the repository root"},
		{name: "remote value file", helm: HelmOptions{ValueFiles: []string{"https://example.com/v.yaml"}}, wantErr: "remote"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.helm
			res, err := Build(context.Background(), chartRepo, "chart", Options{Helm: &h, Refs: refs, AppName: "dump"}, Limits{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			raw, _ := fieldAt(res.Documents[0].Object, "data.values").(string)
			if err := json.Unmarshal([]byte(raw), &got); err != nil {
				t.Fatalf("decode values %q: %v", raw, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExplicitType: an Application's directory, kustomize or helm block
// makes the source that kind whatever its files say, as in Argo CD.
func TestExplicitType(t *testing.T) {
	root := writeTree(t, map[string]string{
		"app/kustomization.yaml": "resources: [cm.yaml]\nnamePrefix: k-\n",
		"app/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
	})
	for _, tc := range []struct {
		name     string
		src      v1alpha1.ApplicationSource
		wantKind string
		wantErr  string
	}{
		{name: "detected", wantKind: KindKustomize},
		{name: "directory block", src: v1alpha1.ApplicationSource{Directory: &v1alpha1.ApplicationSourceDirectory{Include: "cm.yaml"}}, wantKind: KindDirectory},
		{name: "helm block without a chart", src: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{}}, wantErr: "render helm app"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := ApplicationOptions(AppInfo{Name: "a"}, AppSource{Field: "spec.source", Source: tc.src}, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Build(t.Context(), root, "app", opts, Limits{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || res.Kind != tc.wantKind {
				t.Fatalf("Build = %q, %v; want kind %q", res.Kind, err, tc.wantKind)
			}
		})
	}
}
