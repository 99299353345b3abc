package check

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// pluginRepo is a repository whose Application's source a config
// management plugin named gen renders, with the env entry TAG.
var pluginRepo = map[string]string{
	"plugin/settings.txt": "from-the-checkout",
	"app.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd}
spec:
  source:
    repoURL: https://example.com/r.git
    path: plugin
    plugin:
      name: gen
      env: [{name: TAG, value: latest}]
      parameters: [{name: replicas, string: "2"}]
  destination: {server: https://kubernetes.default.svc, namespace: web}
`,
}

// genCommand prints a Pod whose image tag is the TAG env entry, and a
// ConfigMap named after what the plugin got: the parameter, a file of the
// source's directory and the Application's name.
const genCommand = `printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: "nginx:%s"}]}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: got-%s-%s-%s}\n' "$ARGOCD_ENV_TAG" "$PARAM_REPLICAS" "$(cat settings.txt)" "$ARGOCD_APP_NAME"`

// TestRunPluginSource: tollgate test runs a plugin only as the local
// command --plugin names, with the variables Argo CD gives plugins, in the
// source's directory, and judges its output; otherwise a note names the
// plugin. A failing command is an error result with its stderr.
func TestRunPluginSource(t *testing.T) {
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, pluginRepo)
	appRow := "app.yaml Application/web app= default-project missing-resources-finalizer"
	tests := []struct {
		name      string
		path      string
		plugins   map[string]string
		wantRows  []string
		wantNote  string
		wantError string
	}{
		{
			name:     "not run without --plugin",
			wantRows: []string{appRow},
			wantNote: `Application "web" spec.source: config management plugin "gen" is not run by tollgate test; pass --plugin gen=COMMAND to run a local command in its place`,
		},
		{
			name:     "another plugin's command is not run",
			plugins:  map[string]string{"other": "exit 1"},
			wantRows: []string{appRow},
			wantNote: `config management plugin "gen" is not run by tollgate test`,
		},
		{
			name:     "run and judged",
			plugins:  map[string]string{"gen": genCommand},
			wantRows: []string{appRow, "plugin gen output Pod/p app=web no-latest-tag", "plugin gen output ConfigMap/got-2-from-the-checkout-web app=web"},
		},
		{
			name:      "a path out of the repository",
			path:      "../..",
			plugins:   map[string]string{"gen": "pwd"},
			wantError: "outside the repository root",
		},
		{
			name:      "a failing command",
			plugins:   map[string]string{"gen": "echo broken >&2; exit 3"},
			wantError: "plugin gen (--plugin): \"echo broken >&2; exit 3\": exit status 3: broken",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := repo
			if tt.path != "" {
				dir = t.TempDir()
				testutil.WriteFiles(t, dir, pluginRepo)
				testutil.WriteFiles(t, dir, map[string]string{"app.yaml": strings.Replace(pluginRepo["app.yaml"], "path: plugin", "path: "+tt.path, 1)})
			}
			rep, notes, err := Run(t.Context(), Options{Paths: []string{dir}, RepoRoot: dir, RepoURL: "https://example.com/r", Plugins: tt.plugins})
			if err != nil {
				t.Fatal(err)
			}
			rows := resultRows(rep)
			if tt.wantError != "" {
				if !slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, "ERROR") && strings.Contains(r, tt.wantError) }) {
					t.Errorf("rows %q, want an error result containing %q", rows, tt.wantError)
				}
				return
			}
			if diff := cmp.Diff(tt.wantRows, rows); diff != "" {
				t.Errorf("results mismatch (-want +got):\n%s", diff)
			}
			got := noteLines(notes)
			if tt.wantNote != "" && !slices.ContainsFunc(got, func(n string) bool { return strings.Contains(n, tt.wantNote) }) {
				t.Errorf("notes = %q, want one containing %q", got, tt.wantNote)
			}
		})
	}
}
