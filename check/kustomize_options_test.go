package check

import (
	"slices"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/test/testutil"
)

// TestRunKustomizeBuildOptions: --kustomize-build-options reaches the
// kustomizations tollgate test walks and those Applications render, as
// argocd-cm's kustomize.buildOptions reaches the engine's; a flag
// tollgate does not honour is an error result naming it.
func TestRunKustomizeBuildOptions(t *testing.T) {
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, map[string]string{
		"shared/pod.yaml":        "apiVersion: v1\nkind: Pod\nmetadata: {name: shared}\nspec: {containers: [{name: c, image: nginx:latest}]}\n",
		"app/kustomization.yaml": "resources: [../shared/pod.yaml]\n",
	})
	run := func(options string) []string {
		t.Helper()
		rep, _, err := Run(t.Context(), Options{Paths: []string{repo + "/app"}, RepoRoot: repo, RepoURL: "https://example.com/r", KustomizeBuildOptions: options})
		if err != nil {
			t.Fatal(err)
		}
		return resultRows(rep)
	}
	if rows := run(""); !slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, "ERROR") && strings.Contains(r, "security; file") }) {
		t.Errorf("without options: rows %q, want kustomize's load restriction", rows)
	}
	if rows := run("--load-restrictor LoadRestrictionsNone"); !slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, "Pod/shared") && strings.Contains(r, "no-latest-tag") }) {
		t.Errorf("with LoadRestrictionsNone: rows %q, want the shared Pod judged", rows)
	}
	want := "argocd-cm kustomize.buildOptions --enable-exec is not supported"
	if rows := run("--enable-exec"); !slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, "ERROR") && strings.Contains(r, want) }) {
		t.Errorf("--enable-exec: rows %q, want an error result containing %q", rows, want)
	}
}
