package cmp

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// shellPlugin prints a ConfigMap from the request's and the sidecar's
// environment and what its init wrote, then the source's extra.json.
const shellPlugin = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: shell
spec:
  init:
    command: [sh, -c, 'printf "%s" "$ARGOCD_ENV_FOO" > .init-ran']
  generate:
    command: [sh, -c]
    args:
      - |
        printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  foo: "%s"\n  x: "%s"\n  init: "%s"\n  sidecar: "%s"\n---\n' \
          "$ARGOCD_APP_NAME" "$ARGOCD_ENV_FOO" "$PARAM_X" "$(cat .init-ran)" "$SIDECAR"
        cat extra.json
        printf -- '---\n# nothing\n---\nnull\n'
`

func TestGenerateByName(t *testing.T) {
	sockets := socketDir(t)
	opts := testServerOptions(t)
	opts.Env = []string{"PATH=" + os.Getenv("PATH"), "SIDECAR=sidecar", "ARGOCD_ENV_FOO=from-sidecar"}
	startPlugin(t, sockets, shellPlugin, opts)
	repo := makeRepo(t, map[string]string{
		"apps/guestbook/extra.json": `{"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "extra"}}`,
		".git/config":               "[core]\n",
	})
	src := Source{
		AppName: "guestbook", Root: repo, Path: "apps/guestbook",
		Env: []string{"ARGOCD_APP_NAME=guestbook", "ARGOCD_ENV_FOO=bar", "PARAM_X=y", "NOT_A_VARIABLE"},
	}
	manifests, plugin, err := Generate(t.Context(), sockets, "shell", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"apiVersion":"v1","data":{"foo":"bar","init":"bar","sidecar":"sidecar","x":"y"},"kind":"ConfigMap","metadata":{"name":"guestbook"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"extra"}}`,
	}
	if diff := cmp.Diff(want, manifests); diff != "" {
		t.Errorf("manifests (-want +got):\n%s", diff)
	}
	if plugin != "shell" {
		t.Errorf("plugin = %q, want shell", plugin)
	}
	// The request's files are gone.
	if entries, err := os.ReadDir(opts.WorkDir); err != nil || len(entries) != 0 {
		t.Errorf("work dir after the request: %v, %v; want empty", entries, err)
	}
}

// discoveryPlugin is a plugin named name (with version, when set) whose
// discovery is discover and whose generate prints a ConfigMap named after
// it.
func discoveryPlugin(name, version, discover string) string {
	y := "kind: ConfigManagementPlugin\nmetadata: {name: " + name + "}\nspec:\n"
	if version != "" {
		y += "  version: " + version + "\n"
	}
	if discover != "" {
		y += "  discover: " + discover + "\n"
	}
	return y + "  generate: {command: [sh, -c, 'echo \"{\\\"kind\\\": \\\"ConfigMap\\\", \\\"metadata\\\": {\\\"name\\\": \\\"" + name + "\\\"}}\"']}\n"
}

// startDiscoveryPlugins starts a-file (fileName *.a), b-glob-v2
// (find.glob **/*.b), c-nodiscovery, d-command (find.command listing *.d
// files) and a dead socket 0-dead.sock, and a file that is not a socket.
func startDiscoveryPlugins(t *testing.T) string {
	sockets := socketDir(t)
	for _, y := range []string{
		discoveryPlugin("a-file", "", `{fileName: "*.a"}`),
		discoveryPlugin("b-glob", "v2", `{find: {glob: "**/*.b"}}`),
		discoveryPlugin("c-nodiscovery", "", ""),
		discoveryPlugin("d-command", "", `{find: {command: [sh, -c, 'ls *.d 2>/dev/null || true']}}`),
	} {
		startPlugin(t, sockets, y, testServerOptions(t))
	}
	dead, err := net.Listen("unix", filepath.Join(sockets, "0-dead.sock"))
	if err != nil {
		t.Fatal(err)
	}
	dead.(*net.UnixListener).SetUnlinkOnClose(false)
	dead.Close()
	writeTestFile(t, filepath.Join(sockets, "README"), "not a socket")
	return sockets
}

func TestGenerateDiscovery(t *testing.T) {
	sockets := startDiscoveryPlugins(t)
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"fileName", map[string]string{"app/x.a": ""}, "a-file"},
		{"find.glob deep", map[string]string{"app/deep/er/y.b": ""}, "b-glob-v2"},
		{"find.glob no directory", map[string]string{"app/y.b": ""}, "b-glob-v2"},
		{"find.command", map[string]string{"app/z.d": ""}, "d-command"},
		{"first in name order", map[string]string{"app/x.a": "", "app/y.b": ""}, "a-file"},
		{"outside the source's path", map[string]string{"app/k": "", "other/x.a": "", "y.b": "", "z.d": ""}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := Source{AppName: "app", Root: makeRepo(t, tc.files), Path: "app"}
			manifests, plugin, err := Generate(t.Context(), sockets, "", src)
			if tc.want == "" {
				const prefix = "could not find plugin supporting the given repository: error checking plugin configuration 0-dead.sock: "
				if err == nil || !strings.HasPrefix(err.Error(), prefix) {
					t.Errorf("Generate error = %v, want %q...", err, prefix)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plugin != tc.want {
				t.Errorf("plugin = %q, want %q", plugin, tc.want)
			}
			name := strings.TrimSuffix(tc.want, "-v2")
			if diff := cmp.Diff([]string{`{"kind": "ConfigMap", "metadata": {"name": "` + name + `"}}`}, manifests); diff != "" {
				t.Errorf("manifests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGenerateNamedPlugin(t *testing.T) {
	sockets := startDiscoveryPlugins(t)
	src := Source{AppName: "app", Root: makeRepo(t, map[string]string{"app/x.a": ""}), Path: "app"}
	tests := []struct {
		name, plugin string
		want         string // the plugin used, or the error
	}{
		{"matching", "a-file", "a-file"},
		{"versioned", "b-glob-v2", `could not find cmp-server plugin with name "b-glob-v2" supporting the given repository`},
		{"without discovery", "c-nodiscovery", "c-nodiscovery"},
		{"missing", "nope", `could not find cmp-server plugin with name "nope" supporting the given repository: error checking plugin configuration nope.sock: `},
		{"outside the directory", "../x", `could not find cmp-server plugin with name "../x" supporting the given repository: invalid socket file path, "../x.sock" is outside plugin socket dir "` + sockets + `"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, plugin, err := Generate(t.Context(), sockets, tc.plugin, src)
			if err != nil {
				if !strings.HasPrefix(err.Error(), tc.want) {
					t.Errorf("Generate error = %v, want %q...", err, tc.want)
				}
				return
			}
			if plugin != tc.want {
				t.Errorf("plugin = %q, want %q", plugin, tc.want)
			}
		})
	}
}

func TestGenerateFailingPlugin(t *testing.T) {
	sockets := socketDir(t)
	socket := startPlugin(t, sockets, `kind: ConfigManagementPlugin
metadata: {name: failing}
spec:
  generate: {command: [sh, -c, 'echo partial; echo boom >&2; echo again >&2; exit 3']}
`, testServerOptions(t))
	src := Source{Root: makeRepo(t, map[string]string{"a": ""}), Path: "."}
	_, _, err := Generate(t.Context(), sockets, "failing", src)
	want := "error generating manifests in cmp " + socket + ": error receiving stream response: rpc error: code = Unknown desc = " +
		"error generating manifests: `sh -c \"echo partial; echo boom >&2; echo again >&2; exit 3\"` failed exit status 3: boom\nagain"
	if err == nil || err.Error() != want {
		t.Errorf("Generate error =\n%v\nwant\n%s", err, want)
	}
}

func TestGenerateCommandTimeout(t *testing.T) {
	sockets := socketDir(t)
	opts := testServerOptions(t)
	opts.ExecTimeout = 200 * time.Millisecond
	startPlugin(t, sockets, `kind: ConfigManagementPlugin
metadata: {name: slow}
spec:
  generate: {command: [sh, -c, 'echo started >&2; sleep 30; echo "{}"']}
`, opts)
	src := Source{Root: makeRepo(t, map[string]string{"a": ""}), Path: "."}
	_, _, err := Generate(t.Context(), sockets, "slow", src)
	want := "error generating manifests: `sh -c \"echo started >&2; sleep 30; echo \\\"{}\\\"\"` failed timeout after 200ms: started"
	if got := status.Convert(errorsCause(err)).Message(); got != want {
		t.Errorf("Generate error = %v\nwant status message %s", err, want)
	}
}

// errorsCause returns the gRPC status error inside err.
func errorsCause(err error) error {
	for e := err; e != nil; {
		if _, ok := e.(interface{ GRPCStatus() *status.Status }); ok {
			return e
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	return err
}

func TestGenerateLimits(t *testing.T) {
	sockets := socketDir(t)
	startPlugin(t, sockets, `kind: ConfigManagementPlugin
metadata: {name: big}
spec:
  generate: {command: [sh, -c, 'i=0; while [ $i -lt 2000 ]; do echo "# padding line $i"; i=$((i+1)); done; echo "{}"']}
`, testServerOptions(t))
	t.Run("manifests", func(t *testing.T) {
		src := Source{Root: makeRepo(t, map[string]string{"a": ""}), Path: ".", MaxBytes: 4096}
		manifests, _, err := Generate(t.Context(), sockets, "big", src)
		if err != nil {
			t.Fatal(err)
		}
		// The comments are gone, so the response is small.
		if diff := cmp.Diff([]string{"{}"}, manifests); diff != "" {
			t.Errorf("manifests (-want +got):\n%s", diff)
		}
	})
	t.Run("response", func(t *testing.T) {
		startPlugin(t, sockets, `kind: ConfigManagementPlugin
metadata: {name: bigger}
spec:
  generate: {command: [sh, -c, 'i=0; while [ $i -lt 500 ]; do echo "---"; echo "{\"n\": $i}"; i=$((i+1)); done']}
`, testServerOptions(t))
		src := Source{Root: makeRepo(t, map[string]string{"a": ""}), Path: ".", MaxBytes: 1024}
		_, _, err := Generate(t.Context(), sockets, "bigger", src)
		if status.Code(errorsCause(err)) != codes.ResourceExhausted {
			t.Errorf("Generate error = %v, want ResourceExhausted", err)
		}
	})
	t.Run("archive", func(t *testing.T) {
		big := strings.Repeat("incompressible? no, but large enough\n", 2000)
		root := makeRepo(t, map[string]string{"a": big})
		src := Source{AppName: "guestbook", Root: root, Path: ".", MaxBytes: 100}
		_, _, err := Generate(t.Context(), sockets, "big", src)
		want := "application guestbook: archive " + root + ": larger than 100 bytes"
		if err == nil || err.Error() != want {
			t.Errorf("Generate error = %v, want %s", err, want)
		}
	})
}

func TestGenerateSourceErrors(t *testing.T) {
	sockets := startDiscoveryPlugins(t)
	root := makeRepo(t, map[string]string{
		"app/x.a":      "",
		"app/file":     "",
		"app/escape":   "->../..",
		"other/inside": "->../app",
	})
	tests := []struct{ name, path, want string }{
		{"absolute", "/etc", "/etc: app path is absolute"},
		{"outside", "../x", "../x: app path outside root"},
		{"missing", "nope", "nope: app path does not exist"},
		{"not a directory", "app/file", "app/file: app path is not a directory"},
		{"out-of-bounds symlink", "app", "archive " + root + ": repository contains out-of-bounds symlinks. file: app/escape"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Generate(t.Context(), sockets, "", Source{Root: root, Path: tc.path})
			if err == nil || err.Error() != tc.want {
				t.Errorf("Generate error = %v, want %s", err, tc.want)
			}
		})
	}
}

func TestParametersAnnouncement(t *testing.T) {
	sockets := socketDir(t)
	startPlugin(t, sockets, `kind: ConfigManagementPlugin
metadata: {name: params}
spec:
  generate: {command: ["true"]}
  parameters:
    static:
      - {name: static-string, title: Static, required: true, string: s}
      - {name: static-map, collectionType: map, map: {k: v}}
    dynamic:
      command: [sh, -c, 'printf "[{\"name\": \"dynamic\", \"array\": [\"%s\", \"%s\"], \"collectionType\": \"array\"}]" "$PARAM_X" "$(ls)"']
`, testServerOptions(t))
	src := Source{Root: makeRepo(t, map[string]string{"app/only-file": ""}), Path: "app", Env: []string{"PARAM_X=x"}}
	got, plugin, err := ParametersAnnouncement(t.Context(), sockets, "params", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []ParameterAnnouncement{
		{Name: "dynamic", CollectionType: "array", Array: []string{"x", "only-file"}},
		{Name: "static-string", Title: "Static", Required: true, String: "s"},
		{Name: "static-map", CollectionType: "map", Map: map[string]string{"k": "v"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("announcement (-want +got):\n%s", diff)
	}
	if plugin != "params" {
		t.Errorf("plugin = %q, want params", plugin)
	}
}

func TestCheckPluginConfiguration(t *testing.T) {
	sockets := socketDir(t)
	socket := startPlugin(t, sockets, `kind: ConfigManagementPlugin
metadata: {name: creds}
spec:
  generate: {command: ["true"]}
  discover: {fileName: x}
  provideGitCreds: true
`, testServerOptions(t))
	p, err := dial(socket, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	var got checkPluginConfigurationResponse
	if err := p.conn.Invoke(t.Context(), methodCheckPluginConfiguration, &empty{}, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(checkPluginConfigurationResponse{IsDiscoveryConfigured: true, ProvideGitCreds: true}, got); diff != "" {
		t.Errorf("CheckPluginConfiguration (-want +got):\n%s", diff)
	}
}
