package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/engine/render"
)

// decodeApp decodes a YAML Application for tests.
func decodeApp(t *testing.T, src string) map[string]any {
	t.Helper()
	docs, _, err := render.Decode("app.yaml", []byte(src), render.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 {
		t.Fatalf("got %d documents, want 1", len(docs))
	}
	return docs[0].Object
}

func TestResolveSources(t *testing.T) {
	const url = "https://github.com/acme/config"
	head := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\n"
	tests := []struct {
		name    string
		spec    string
		want    appPlan
		wantErr string
	}{
		{
			name: "kustomize options and destination namespace",
			spec: `spec:
  source:
    repoURL: https://GitHub.com/acme/config.git/
    path: apps/web
    kustomize:
      images: [nginx=nginx:1.27]
      namePrefix: prod-
      nameSuffix: -a
      namespace: web-prod
      commonLabels: {team: web}
      commonAnnotations: {owner: me}
  destination: {server: https://kubernetes.default.svc, namespace: web}
`,
			want: appPlan{Sources: []appSource{{
				Field: "spec.source",
				Path:  "apps/web",
				Options: render.Options{
					Kustomize: &render.KustomizeOptions{
						Images:            []string{"nginx=nginx:1.27"},
						NamePrefix:        "prod-",
						NameSuffix:        "-a",
						Namespace:         "web-prod",
						CommonLabels:      map[string]string{"team": "web"},
						CommonAnnotations: map[string]string{"owner": "me"},
					},
					Namespace: "web",
					AppName:   "web",
				},
			}}},
		},
		{
			name: "directory options and empty path",
			spec: `spec:
  source:
    repoURL: https://github.com/acme/config
    directory: {recurse: true, include: "*.yaml", exclude: "test/*"}
  destination: {namespace: web}
`,
			want: appPlan{Sources: []appSource{{
				Field: "spec.source",
				Path:  ".",
				Options: render.Options{
					Directory: &render.DirectoryOptions{Recurse: true, Include: "*.yaml", Exclude: "test/*"},
					Namespace: "web",
					AppName:   "web",
				},
			}}},
		},
		{
			name: "helm options",
			spec: `spec:
  source:
    repoURL: https://github.com/acme/config
    path: charts/web
    helm:
      valueFiles: [values-prod.yaml]
      values: "replicas: 2"
      valuesObject: {image: {tag: "1.0"}}
      parameters:
        - {name: a, value: "1"}
        - {name: b, value: "x,y", forceString: true}
      releaseName: web-prod
      namespace: web-ns
      skipCrds: true
`,
			want: appPlan{Sources: []appSource{{
				Field: "spec.source",
				Path:  "charts/web",
				Options: render.Options{
					Helm: &render.HelmOptions{
						ValueFiles:   []string{"values-prod.yaml"},
						Values:       "replicas: 2",
						ValuesObject: map[string]any{"image": map[string]any{"tag": "1.0"}},
						Parameters: []render.HelmParameter{
							{Name: "a", Value: "1"},
							{Name: "b", Value: "x,y", ForceString: true},
						},
						ReleaseName: "web-prod",
						Namespace:   "web-ns",
						SkipCrds:    true,
					},
					AppName: "web",
				},
			}}},
		},
		{
			name: "multiple sources",
			spec: `spec:
  source: {repoURL: https://github.com/acme/config, path: ignored}
  sources:
    - repoURL: https://github.com/acme/config.git
      path: charts/web
      helm:
        valueFiles: [$values/envs/prod.yaml]
    - repoURL: https://github.com/acme/config
      ref: values
    - repoURL: https://charts.bitnami.com/bitnami
      chart: redis
      targetRevision: 19.0.0
    - repoURL: https://github.com/someone/else
      path: x
`,
			want: appPlan{
				Sources: []appSource{{
					Field: "spec.sources[0]",
					Path:  "charts/web",
					Options: render.Options{
						Helm:    &render.HelmOptions{ValueFiles: []string{"/envs/prod.yaml"}},
						AppName: "web",
					},
				}},
				Skipped: []string{
					`spec.sources[1]: ref "values" only provides value files; not rendered on its own`,
					`spec.sources[2]: Helm chart "redis" from repository https://charts.bitnami.com/bitnami is not rendered (only sources from the repository under test are)`,
					"spec.sources[3]: repository https://github.com/someone/else is not the repository under test; not rendered",
				},
			},
		},
		{
			name: "value file from another repository",
			spec: `spec:
  sources:
    - repoURL: https://github.com/acme/config
      path: charts/web
      helm: {valueFiles: [$other/prod.yaml]}
    - {repoURL: https://github.com/acme/values, ref: other}
`,
			want: appPlan{Skipped: []string{
				`spec.sources[0]: value file "$other/prod.yaml" comes from a source that is not the repository under test; not rendered`,
				"spec.sources[1]: repository https://github.com/acme/values is not the repository under test; not rendered",
			}},
		},
		{
			name: "unsupported options are reported",
			spec: `spec:
  source:
    repoURL: https://github.com/acme/config
    path: apps/web
    kustomize:
      patches: [{patch: "x"}]
      replicas: [{name: web, count: 2}]
`,
			want: appPlan{
				Sources: []appSource{{
					Field:   "spec.source",
					Path:    "apps/web",
					Options: render.Options{Kustomize: &render.KustomizeOptions{}, AppName: "web"},
				}},
				Skipped: []string{
					"spec.source.kustomize.patches is not applied by tollgate test",
					"spec.source.kustomize.replicas is not applied by tollgate test",
				},
			},
		},
		{
			name: "plugin source",
			spec: "spec:\n  source: {repoURL: https://github.com/acme/config, path: a, plugin: {name: cdk8s}}\n",
			want: appPlan{Skipped: []string{"spec.source: config management plugins are not supported; not rendered"}},
		},
		{
			name: "no source",
			spec: "spec:\n  destination: {namespace: web}\n",
			want: appPlan{Skipped: []string{"has no spec.source or spec.sources; nothing to render"}},
		},
		{
			name:    "sources not a list",
			spec:    "spec:\n  sources: {repoURL: x}\n",
			wantErr: "spec.sources: want a list, got an object",
		},
		{
			name:    "parameter value not a string",
			spec:    "spec:\n  source:\n    repoURL: https://github.com/acme/config\n    helm: {parameters: [{name: a, value: 3}]}\n",
			wantErr: "spec.source.helm.parameters[0].value: want a string, got a number",
		},
		{
			name:    "label value not a string",
			spec:    "spec:\n  source:\n    repoURL: https://github.com/acme/config\n    kustomize: {commonLabels: {tier: true}}\n",
			wantErr: "spec.source.kustomize.commonLabels.tier: want a string, got a boolean",
		},
		{
			name:    "destination not an object",
			spec:    "spec:\n  destination: in-cluster\n",
			wantErr: "spec.destination: want an object, got a string",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveSources(decodeApp(t, head+tt.spec), normalizeRepoURL(url))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plan mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
