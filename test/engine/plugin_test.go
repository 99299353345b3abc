package engine_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver/cmp"
)

// cmpServer is the argument that makes the test binary a plugin sidecar:
// cmp-server CONFIG SOCKET-DIR.
const cmpServer = "cmp-server"

// serveCMP is the test binary run as a plugin sidecar (cmp.Serve), until
// SIGTERM.
func serveCMP(config, socketDir string) error {
	cfg, err := cmp.LoadConfig(config)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return cmp.Serve(ctx, cfg, socketDir)
}

// The plugin sidecars of the engine under test, each a shell plugin in its
// own process, as Argo CD runs each plugin.yaml in a sidecar of the
// repo-server:
//
//   - cm-gen (version v1.0, socket cm-gen-v1.0.sock), chosen by name: a
//     ConfigMap of what a plugin is given (ARGOCD_ENV_*, PARAM_*, the
//     build variables, a file of the source's directory) and, with the
//     parameter secret=yes, a plaintext Secret, which the gate must deny.
//   - discovered, chosen by discovery for a directory with a *.cmp file:
//     a ConfigMap of that file.
var pluginConfigs = map[string]string{
	"cm-gen": `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: cm-gen
spec:
  version: v1.0
  init:
    command: [sh, -c, "test -f settings.txt"]
  generate:
    command: [sh, GENERATE]
`,
	"discovered": `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: discovered
spec:
  discover:
    fileName: "./*.cmp"
  generate:
    command: [sh, -c, "printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: discovered\ndata:\n  found: %s\n' \"$(cat *.cmp)\""]
`,
}

// cmGenScript is cm-gen's generate command.
const cmGenScript = `cat <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: plugin-output
data:
  greeting: "$ARGOCD_ENV_GREETING"
  tier: "$PARAM_TIER"
  app: "$ARGOCD_APP_NAME"
  settings: "$(cat settings.txt)"
EOF
if [ "$PARAM_SECRET" = yes ]; then
  printf -- '---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: leaked\nstringData:\n  password: hunter2\n'
fi
`

// startPluginSidecars writes the plugins' configurations and runs each in
// a child process serving a socket in a new directory, which it returns
// once every socket is there, with a function that stops them.
func startPluginSidecars() (string, func(), error) {
	// Socket paths are limited to about 100 bytes: a short directory.
	dir, err := os.MkdirTemp("", "cmp")
	if err != nil {
		return "", nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	sockets := filepath.Join(dir, "plugins")
	if err := os.Mkdir(sockets, 0o755); err != nil {
		return "", nil, err
	}
	script := filepath.Join(dir, "generate.sh")
	if err := os.WriteFile(script, []byte(cmGenScript), 0o644); err != nil {
		return "", nil, err
	}
	var cmds []*exec.Cmd
	stop := func() {
		for _, c := range cmds {
			_ = c.Process.Signal(syscall.SIGTERM)
			_ = c.Wait()
		}
		_ = os.RemoveAll(dir)
	}
	for name, config := range pluginConfigs {
		path := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(config, "GENERATE", script)), 0o644); err != nil {
			stop()
			return "", nil, err
		}
		c := exec.Command(exe, cmpServer, path, sockets)
		c.Stdout, c.Stderr = os.Stderr, os.Stderr
		if err := c.Start(); err != nil {
			stop()
			return "", nil, err
		}
		cmds = append(cmds, c)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, sock := range []string{"cm-gen-v1.0.sock", "discovered.sock"} {
		for {
			if _, err := os.Stat(filepath.Join(sockets, sock)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				stop()
				return "", nil, fmt.Errorf("plugin socket %s did not appear within 30s", sock)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return sockets, stop, nil
}

// pluginFixture is a fixture whose repository has a directory for each
// plugin: plugin/ (settings.txt, for cm-gen) and discover/ (a .cmp file).
func pluginFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixture(t, map[string]string{
		"plugin/settings.txt":   "from-the-repository",
		"discover/values.cmp":   "discovered-by-file",
		"manifests/README.md":   "unused\n",
		"plugin/nested/ignored": "x",
	})
}

// TestPluginSource syncs an Application whose source a config management
// plugin renders, chosen by name, through Argo CD's cmp-server protocol:
// the plugin gets the source's directory, its env as ARGOCD_ENV_*, its
// parameters as PARAM_*, the build variables, and its init command runs
// first.
func TestPluginSource(t *testing.T) {
	f := pluginFixture(t)
	f.application(&v1alpha1.SyncPolicyAutomated{}, func(app *v1alpha1.Application) {
		app.Spec.Source.Path = "plugin"
		app.Spec.Source.Plugin = &v1alpha1.ApplicationSourcePlugin{
			Name:       "cm-gen-v1.0",
			Env:        []v1alpha1.EnvEntry{{Name: "GREETING", Value: "hello-$ARGOCD_APP_REVISION_SHORT"}},
			Parameters: []v1alpha1.ApplicationSourcePluginParameter{{Name: "tier", String: new("web")}},
		}
	})
	app := f.waitSynced(f.head)
	if got := app.Status.SourceType; got != v1alpha1.ApplicationSourceTypePlugin {
		t.Errorf("status.sourceType = %q, want Plugin", got)
	}
	var cm corev1.ConfigMap
	if err := f.get(&cm, "plugin-output"); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"greeting": "hello-" + f.head[:7], "tier": "web", "app": f.name, "settings": "from-the-repository"}
	for k, v := range want {
		if cm.Data[k] != v {
			t.Errorf("the plugin's ConfigMap: %s = %q, want %q (data %v)", k, cm.Data[k], v, cm.Data)
		}
	}
}

// TestPluginSourceDiscovered: a plugin source without a name is rendered
// by the plugin whose discovery rules match its directory.
func TestPluginSourceDiscovered(t *testing.T) {
	f := pluginFixture(t)
	f.application(&v1alpha1.SyncPolicyAutomated{}, func(app *v1alpha1.Application) {
		app.Spec.Source.Path = "discover"
		app.Spec.Source.Plugin = &v1alpha1.ApplicationSourcePlugin{}
	})
	f.waitSynced(f.head)
	var cm corev1.ConfigMap
	if err := f.get(&cm, "discovered"); err != nil || cm.Data["found"] != "discovered-by-file" {
		t.Errorf("the discovered plugin's ConfigMap: %v, data %v", err, cm.Data)
	}
}

// TestPluginSourceGated: what a plugin renders is judged like any render:
// a plaintext Secret in its output is denied and nothing is applied.
func TestPluginSourceGated(t *testing.T) {
	f := pluginFixture(t)
	f.application(&v1alpha1.SyncPolicyAutomated{}, func(app *v1alpha1.Application) {
		app.Spec.Source.Path = "plugin"
		app.Spec.Source.Plugin = &v1alpha1.ApplicationSourcePlugin{
			Name:       "cm-gen-v1.0",
			Parameters: []v1alpha1.ApplicationSourcePluginParameter{{Name: "secret", String: new("yes")}},
		}
	})
	f.waitApp("refused by no-plaintext-secret", func(a *v1alpha1.Application) bool {
		msg, ok := condition(a, v1alpha1.ApplicationConditionPolicyViolation)
		return ok && strings.Contains(msg, "[no-plaintext-secret]")
	})
	consistently(t, "nothing applied", 3*resync, func() (bool, string) {
		if gone, why := f.gone(&corev1.Secret{}, "leaked"); !gone {
			return false, why
		}
		return f.gone(&corev1.ConfigMap{}, "plugin-output")
	})
}

// TestPluginSourceUnknown: a plugin name no sidecar serves fails the
// comparison with Argo CD's message.
func TestPluginSourceUnknown(t *testing.T) {
	f := pluginFixture(t)
	f.application(&v1alpha1.SyncPolicyAutomated{}, func(app *v1alpha1.Application) {
		app.Spec.Source.Path = "plugin"
		app.Spec.Source.Plugin = &v1alpha1.ApplicationSourcePlugin{Name: "nope"}
	})
	f.waitApp("a ComparisonError naming the plugin", func(a *v1alpha1.Application) bool {
		for _, c := range a.Status.Conditions {
			if c.Type == v1alpha1.ApplicationConditionComparisonError && strings.Contains(c.Message, `plugin with name "nope"`) {
				return true
			}
		}
		return false
	})
}
