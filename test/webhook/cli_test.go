package webhook_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/test/envtest"
)

// TestCLIWritesAreJudged: tollgate app create, app set and app patch
// write through the API server with the user's kubeconfig, so the webhook
// judges them as any other write: an Application sent into the Argo CD
// namespace is refused with the rule named, and nothing is written.
func TestCLIWritesAreJudged(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	dir := t.TempDir()
	bin, err := envtest.BuildTollgate(dir)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := env.KubeConfig("tollgate-cli-user")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (code int, stderr string) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), errOut.String()
		}
		if err != nil {
			t.Fatalf("run tollgate %v: %v", args, err)
		}
		return 0, errOut.String()
	}
	u := newUser(t, "")
	project := unique(t, ns, "team")
	proj := appProject(project, ns)
	wantAllowed(t, u.Create(ctx, proj))
	waitCached(t, proj)
	denied := fmt.Sprintf("admission webhook %q denied the request: [no-argocd-destination] ", argoprojHook)

	writeApp := func(name, destNS string) string {
		b, err := yaml.Marshal(application(name, project, destNS).Object)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return file
	}
	bad := unique(t, ns, "bad")
	if code, stderr := run("app", "create", "-f", writeApp(bad, argocdNS)); code == 0 || !strings.Contains(stderr, denied) {
		t.Errorf("app create into argocd: exit %d, stderr %q; want it refused with %q", code, stderr, denied)
	}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: argocdNS, Name: bad}, newApplication()); !apierrors.IsNotFound(err) {
		t.Errorf("the refused Application %s: %v, want it not found", bad, err)
	}

	good := unique(t, ns, "good")
	if code, stderr := run("app", "create", "-f", writeApp(good, ns)); code != 0 {
		t.Fatalf("app create: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"app", "set", good, "--dest-namespace", argocdNS},
		{"app", "patch", good, "--type", "merge", "--patch", `{"spec":{"destination":{"namespace":"` + argocdNS + `"}}}`},
	} {
		if code, stderr := run(args...); code == 0 || !strings.Contains(stderr, denied) {
			t.Errorf("%v: exit %d, stderr %q; want it refused with %q", args, code, stderr, denied)
		}
	}
	app := newApplication()
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: argocdNS, Name: good}, app); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(app.Object, "spec", "destination", "namespace"); got != ns {
		t.Errorf("destination namespace %q after refused writes, want %q", got, ns)
	}
}
