package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/test/testutil"
)

// diffRepo makes a Git repository whose main branch has one commit of
// base, then writes head over the work tree (an empty content removes
// nothing: use new names for new files).
func diffRepo(t *testing.T, base, head map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	repo := testutil.InitRepo(t, dir)
	testutil.WriteFiles(t, dir, base)
	testutil.CommitAll(t, repo, "base")
	testutil.WriteFiles(t, dir, head)
	return dir
}

const prDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team-a}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: "nginx:TAG"}
`

const prSecret = `apiVersion: v1
kind: Secret
metadata: {name: db, namespace: team-a}
data: {password: c2VjcmV0}
`

// TestDiffExitCodes: 0 without an introduced denial, 1 with one (or with
// any denial under --fail-on existing), 2 on bad flags, outside Git, or
// when the head does not decode (the report still printed).
func TestDiffExitCodes(t *testing.T) {
	pinned := strings.ReplaceAll(prDeployment, "TAG", "1.27.3")
	for _, tc := range []struct {
		name       string
		base, head map[string]string
		args       []string
		want       int
		wantOut    string
	}{
		{"tag changed", map[string]string{"web.yaml": pinned}, map[string]string{"web.yaml": strings.ReplaceAll(prDeployment, "TAG", "1.28.0")}, nil, 0, `"changed": 1`},
		{"latest introduced", map[string]string{"web.yaml": pinned}, map[string]string{"web.yaml": strings.ReplaceAll(prDeployment, "TAG", "latest")}, nil, exitDenied, `"introducedDenials": 1`},
		{"existing denial", map[string]string{"db.yaml": prSecret}, map[string]string{"web.yaml": pinned}, nil, 0, `"existingDenials": 1`},
		{"existing denial fails on existing", map[string]string{"db.yaml": prSecret}, map[string]string{"web.yaml": pinned}, []string{"--fail-on", "existing"}, exitDenied, `"existingDenials": 1`},
		{"head does not decode", map[string]string{"web.yaml": pinned}, map[string]string{"web.yaml": "kind: [unclosed\n"}, nil, exitUsage, `"errors": 1`},
		{"bad --fail-on", nil, nil, []string{"--fail-on", "always"}, exitUsage, ""},
		{"bad --output", nil, nil, []string{"-o", "yaml"}, exitUsage, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := diffRepo(t, map[string]string{"README.md": "x", "web.yaml": pinned}, nil)
			if tc.base != nil || tc.head != nil {
				dir = diffRepo(t, tc.base, tc.head)
			}
			args := append([]string{"diff", "-o", "json"}, tc.args...)
			r := runCLI(t, nil, append(args, dir)...)
			if r.code != tc.want {
				t.Fatalf("exit code = %d, want %d (error %q)\n%s", r.code, tc.want, r.err, r.stdout)
			}
			if tc.wantOut == "" {
				return
			}
			if !strings.Contains(r.stdout, tc.wantOut) {
				t.Errorf("report lacks %s:\n%s", tc.wantOut, r.stdout)
			}
			var decoded map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &decoded); err != nil {
				t.Errorf("report is not JSON: %v", err)
			}
		})
	}
}

// TestDiffOutsideGit: a directory in no Git repository is a usage error
// that says so.
func TestDiffOutsideGit(t *testing.T) {
	r := runCLI(t, nil, "diff", t.TempDir())
	if r.code != exitUsage || !strings.Contains(r.err, "open the Git repository") {
		t.Errorf("exit %d, error %q; want %d and the repository named", r.code, r.err, exitUsage)
	}
}

// TestDiffSecretMasked: a Secret's values never reach the report, in any
// format.
func TestDiffSecretMasked(t *testing.T) {
	dir := diffRepo(t, map[string]string{"db.yaml": prSecret}, map[string]string{"db.yaml": strings.ReplaceAll(prSecret, "c2VjcmV0", "bmV3LXNlY3JldA==")})
	for _, format := range []string{"text", "markdown", "json", "html"} {
		r := runCLI(t, nil, "diff", "-o", format, dir)
		if r.code != 0 {
			t.Fatalf("%s: exit %d (%s)", format, r.code, r.err)
		}
		for _, secret := range []string{"c2VjcmV0", "bmV3LXNlY3JldA=="} {
			if strings.Contains(r.stdout, secret) {
				t.Errorf("%s report holds the Secret's value %s", format, secret)
			}
		}
		if !strings.Contains(strings.ReplaceAll(r.stdout, "&#43;", "+"), "password: +++++++") {
			t.Errorf("%s report shows no masked change:\n%s", format, r.stdout)
		}
	}
}
