package check

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/appset"
	"github.com/tollgate-dev/tollgate/reposerver/render"
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

// appSource is one source the repo-server service was asked to render.
type appSource struct {
	Field, Path string
	Options     render.Options
}

// appPlan is what renderApplication asked the service to render, and the
// sources it skipped.
type appPlan struct {
	Sources []appSource
	Skipped []string
}

// recorder is a renderer that records what it is asked to render, and
// renders nothing.
type recorder struct {
	mu    sync.Mutex
	calls []appSource
}

func (r *recorder) Build(_ context.Context, _, dir string, opts render.Options, _ render.Limits) (render.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, appSource{Path: dir, Options: opts})
	return render.Result{Kind: render.KindDirectory}, nil
}

func (r *recorder) Generate(context.Context, *v1alpha1.ApplicationSet, appset.Sources) ([]reposerver.Generated, error) {
	return nil, errors.New("not for generation")
}

// plan renders the Application obj as tollgate test does, the checkout at
// root being the repository repoURL, and returns what the repo-server
// service was asked to render.
func plan(t *testing.T, obj map[string]any, repoURL, controlNS, root string) (appPlan, error) {
	t.Helper()
	rec := &recorder{}
	svc, err := newAppService(checkout{root: repoRoot{given: root}, repoURL: reposerver.NormalizeURL(repoURL)}, nil, nil, rec, nil, render.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := renderApplication(t.Context(), svc, obj, controlNS, render.Capabilities{}, appSetProjects{})
	if err != nil {
		return appPlan{}, err
	}
	p := appPlan{Skipped: res.Skipped}
	for i, s := range res.Sources {
		p.Sources = append(p.Sources, appSource{Field: s.Field, Path: rec.calls[i].Path, Options: rec.calls[i].Options})
	}
	return p, nil
}

// TestPlanApplication: what tollgate test asks the repo-server service to
// render of an Application, and what it skips with a note.
func TestPlanApplication(t *testing.T) {
	const url = "https://github.com/acme/config"
	root := t.TempDir()
	head := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\n"
	tests := []struct {
		name    string
		repoURL string // default url
		spec    string
		want    appPlan
		wantErr string
		// wantUnsupported: the error is a *render.UnsupportedError.
		wantUnsupported bool
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
      valueFiles: [values-prod.yaml, values-missing.yaml]
      ignoreMissingValueFiles: true
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
						// values is not read beside valuesObject, as in Argo CD.
						ValueFiles:   []string{"values-prod.yaml", "values-missing.yaml"},
						ValuesObject: map[string]any{"image": map[string]any{"tag": "1.0"}},
						Parameters: []render.HelmParameter{
							{Name: "a", Value: "1"},
							{Name: "b", Value: "x,y", ForceString: true},
						},
						ReleaseName:             "web-prod",
						Namespace:               "web-ns",
						SkipCrds:                true,
						IgnoreMissingValueFiles: true,
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
						Helm:    &render.HelmOptions{ValueFiles: []string{"$values/envs/prod.yaml"}},
						AppName: "web",
						Refs:    map[string]string{"values": root},
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
			// Argo CD renders no source with a ref when there are several,
			// path or not (render.AppSource.RefOnly), as the engine.
			// As in Argo CD, a ref source with a path is rendered too.
			name: "ref source with a path",
			spec: `spec:
  sources:
    - {repoURL: https://github.com/acme/config, path: apps/a}
    - {repoURL: https://github.com/acme/config, path: apps/b, ref: b}
`,
			want: appPlan{
				Sources: []appSource{{
					Field:   "spec.sources[0]",
					Path:    "apps/a",
					Options: render.Options{AppName: "web", Refs: map[string]string{"b": root}},
				}, {
					Field:   "spec.sources[1]",
					Path:    "apps/b",
					Options: render.Options{AppName: "web", Refs: map[string]string{"b": root}},
				}},
			},
		},
		{
			name: "scp-like URL of the repository under test",
			// The Application and the flag spell the same repository
			// differently; reposerver.NormalizeURL gives both one form.
			repoURL: "ssh://git@GitHub.com/acme/config.git/",
			spec: `spec:
  sources:
    - repoURL: git@github.com:acme/config.git
      path: charts/web
      helm: {valueFiles: [$values/prod.yaml]}
    - {repoURL: "ssh://git@github.com:22/acme/config", ref: values}
    - {repoURL: https://github.com/acme/config, path: other}
`,
			want: appPlan{
				Sources: []appSource{{
					Field: "spec.sources[0]",
					Path:  "charts/web",
					Options: render.Options{
						Helm:    &render.HelmOptions{ValueFiles: []string{"$values/prod.yaml"}},
						AppName: "web",
						Refs:    map[string]string{"values": root},
					},
				}},
				Skipped: []string{
					`spec.sources[1]: ref "values" only provides value files; not rendered on its own`,
					"spec.sources[2]: repository https://github.com/acme/config is not the repository under test; not rendered",
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
			name:    "value file naming no source",
			spec:    "spec:\n  source:\n    repoURL: https://github.com/acme/config\n    helm: {valueFiles: [$nope/prod.yaml]}\n",
			wantErr: `spec.source.helm.valueFiles[0]: no source of the application has ref "nope"`,
		},
		{
			name: "unsupported options are refused",
			spec: `spec:
  source:
    repoURL: https://github.com/acme/config
    path: apps/web
    tagPrefix: web/
    kustomize:
      patches: [{patch: "x"}]
`,
			wantErr:         "spec.source.tagPrefix is not supported: a Git targetRevision is not read as a semver constraint over tags",
			wantUnsupported: true,
		},
		{
			name: "unsupported option of a later source",
			spec: `spec:
  sources:
    - {repoURL: https://github.com/acme/config, path: a}
    - {repoURL: https://github.com/acme/config, path: b, tagPrefix: web/}
`,
			wantErr:         "spec.sources[1].tagPrefix is not supported: a Git targetRevision is not read as a semver constraint over tags",
			wantUnsupported: true,
		},
		{
			name:            "tag prefix",
			spec:            "spec:\n  source: {repoURL: https://github.com/acme/config, path: a, tagPrefix: web/}\n",
			wantErr:         "spec.source.tagPrefix is not supported: a Git targetRevision is not read as a semver constraint over tags",
			wantUnsupported: true,
		},
		{
			name:            "source hydrator",
			spec:            "spec:\n  sourceHydrator: {drySource: {repoURL: https://github.com/acme/config}}\n  source: {repoURL: https://github.com/acme/config, path: a}\n",
			wantErr:         "spec.sourceHydrator is not supported: Argo CD's source hydrator is not run",
			wantUnsupported: true,
		},
		{
			name:            "remote value file",
			spec:            "spec:\n  source: {repoURL: https://github.com/acme/config, path: a, helm: {valueFiles: [\"https://x.example/v.yaml\"]}}\n",
			wantErr:         "spec.source.helm.valueFiles[0] is not supported: remote value files (https://x.example/v.yaml) are not fetched",
			wantUnsupported: true,
		},
		{
			// The engine cannot fetch this source in tollgate test either:
			// as before, a note rather than a refusal.
			name: "unsupported option of another repository's source",
			spec: "spec:\n  source: {repoURL: https://github.com/someone/else, path: a, kustomize: {patches: [{patch: x}]}}\n",
			want: appPlan{Skipped: []string{"spec.source: repository https://github.com/someone/else is not the repository under test; not rendered"}},
		},
		{
			name: "no source",
			spec: "spec:\n  destination: {namespace: web}\n",
			want: appPlan{Skipped: []string{"has no spec.source or spec.sources; nothing to render"}},
		},
		{
			name: "no repository URL",
			spec: "spec:\n  source: {path: a}\n",
			want: appPlan{Skipped: []string{"spec.source: has no repoURL; not rendered"}},
		},
		{
			name:    "sources not a list",
			spec:    "spec:\n  sources: {repoURL: x}\n",
			wantErr: "spec.sources: want a list, got an object",
		},
		{
			name:    "path not a string",
			spec:    "spec:\n  sources:\n    - {repoURL: https://github.com/acme/config, path: 3}\n",
			wantErr: "spec.sources[0].path: want a string, got a number",
		},
		{
			name:    "parameter value not a string",
			spec:    "spec:\n  source:\n    repoURL: https://github.com/acme/config\n    helm: {parameters: [{name: a, value: 3}]}\n",
			wantErr: "spec.source.helm.parameters[0].value: want a string, got a number",
		},
		{
			name:    "value files not a list",
			spec:    "spec:\n  source:\n    repoURL: https://github.com/acme/config\n    helm: {valueFiles: values.yaml}\n",
			wantErr: "spec.source.helm.valueFiles: want a list of strings, got a string",
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
		{
			name:    "replica count neither a number nor a string",
			spec:    "spec:\n  source:\n    repoURL: https://github.com/acme/config\n    kustomize: {replicas: [{name: web, count: [2]}]}\n",
			wantErr: "spec.source.kustomize.replicas[0].count: want an integer or a string, got a list",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repoURL := url
			if tt.repoURL != "" {
				repoURL = tt.repoURL
			}
			got, err := plan(t, decodeApp(t, head+tt.spec), repoURL, "argocd", root)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				var ue *render.UnsupportedError
				if errors.As(err, &ue) != tt.wantUnsupported {
					t.Errorf("error %v is a *render.UnsupportedError: %v, want %v", err, !tt.wantUnsupported, tt.wantUnsupported)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(render.Options{}, "Type")); diff != "" {
				t.Errorf("plan mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlanApplicationInstanceName: an Application is named for its build
// variables as the controller names it, by the namespace Argo CD runs in
// (--argocd-namespace or the configuration's), not by "argocd".
func TestPlanApplicationInstanceName(t *testing.T) {
	const url = "https://github.com/acme/config"
	doc := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: gitops}\n" +
		"spec:\n  source:\n    repoURL: " + url + "\n    path: chart\n    helm: {parameters: [{name: app, value: $ARGOCD_APP_NAME}]}\n"
	for _, tt := range []struct{ controlNS, want string }{
		{"gitops", "web"},
		{"argocd", "gitops_web"},
	} {
		p, err := plan(t, decodeApp(t, doc), url, tt.controlNS, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Sources) != 1 || p.Sources[0].Options.Helm == nil || len(p.Sources[0].Options.Helm.Parameters) != 1 {
			t.Fatalf("plan = %+v, want one Helm source with one parameter", p)
		}
		if got := p.Sources[0].Options.Helm.Parameters[0].Value; got != tt.want {
			t.Errorf("Argo CD in %s: ARGOCD_APP_NAME = %q, want %q", tt.controlNS, got, tt.want)
		}
	}
}
