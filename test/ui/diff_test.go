package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/devstack/gitrepo"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// TestRemoteDiffStaysInProject: the diff of an Application on a registered
// cluster reads that cluster with its Secret's credentials (here the
// administrator's, on this control plane under a second URL), never
// alice's; so it reads only what the Application's project permits, as a
// sync writes. A render naming an object of team-b, which the project
// does not permit and alice may not read, makes the diff page 403 with
// the refusal naming the object and rule; so does a live object outside
// the project that carries the Application's tracking id (a forged prune
// candidate). The other team's live value appears in neither. Within the
// project, the diff is shown.
func TestRemoteDiffStaysInProject(t *testing.T) {
	const value = "TEAM-B-ONLY-4c0ffee"
	suffix := fmt.Sprint(time.Now().UnixNano())
	own := "ui-remote-" + suffix
	project := "ui-remote-" + suffix

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimRight(cfg.Host, "/")
	remote := strings.Replace(host, "127.0.0.1", "localhost", 1)
	if remote == host {
		t.Fatalf("no second name for the API server %s", host)
	}
	cc, err := json.Marshal(map[string]any{"tlsClientConfig": map[string]any{
		"caData": cfg.CAData, "certData": cfg.CertData, "keyData": cfg.KeyData,
	}})
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	for name, data := range map[string]string{
		"permitted/own.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own\ndata:\n  key: desired\n",
		"refused/own.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own\ndata:\n  key: desired\n",
		"refused/victim.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: victim\n  namespace: " + otherNS +
			"\ndata:\n  key: rendered\n",
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := exampleRepo(t)
	repo, err := gitrepo.Import(t.Context(), gitRoot, base[:strings.LastIndex(base, "/")], "remote-diff-"+suffix, dir, nil, "remote manifests")
	if err != nil {
		t.Fatal(err)
	}

	app := func(name, path string) *v1alpha1.Application {
		return &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: name},
			Spec: v1alpha1.ApplicationSpec{
				Project:     project,
				Source:      &v1alpha1.ApplicationSource{RepoURL: repo.URL(), TargetRevision: "main", Path: path},
				Destination: v1alpha1.ApplicationDestination{Server: remote, Namespace: own},
			},
		}
	}
	refusedApp, permittedApp := app("ui-remote-refused-"+suffix, "refused"), app("ui-remote-permitted-"+suffix, "permitted")
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: own}},
		// The cluster Secret: its values are in plain text, as Argo CD's
		// are, which the webhook allows where exempted.
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: "cluster-" + suffix,
				Labels:      map[string]string{"argocd.argoproj.io/secret-type": "cluster"},
				Annotations: map[string]string{"tollgate.dev/exempt": "no-plaintext-secret"}},
			StringData: map[string]string{"name": "remote-" + suffix, "server": remote, "config": string(cc)},
		},
		&v1alpha1.AppProject{
			ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: project},
			Spec: v1alpha1.AppProjectSpec{
				SourceRepos:  []string{repo.URL()},
				Destinations: []v1alpha1.ApplicationDestination{{Server: remote, Namespace: own}},
			},
		},
		// Another team's object, which the refused render names.
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: otherNS, Name: "victim"}, Data: map[string]string{"key": value}},
		refusedApp, permittedApp,
	} {
		create(t, o)
	}

	diffPage := func(app *v1alpha1.Application) (int, string) {
		t.Helper()
		code, body := get(t, proxyUI+"/applications/argocd/"+app.Name+"/diff", alice)
		if strings.Contains(body, value) {
			t.Errorf("the diff of %s shows the other team's value %q:\n%s", app.Name, value, body)
		}
		return code, html.UnescapeString(body)
	}
	refused := func(lines string) string {
		return fmt.Sprintf("diff refused: AppProject %q does not permit it, no live object is shown:\n%s", project, lines)
	}
	destinationDenied := func(app, ns, name string) string {
		return fmt.Sprintf(`[project-destination-denied] ConfigMap/%s/%s: ConfigMap %q of Application %q has destination (server %q, namespace %q), which AppProject %q does not permit; deploy it into a namespace the project's spec.destinations list or add this one there`,
			ns, name, name, app, remote, ns, project)
	}

	code, body := diffPage(refusedApp)
	if want := refused(destinationDenied(refusedApp.Name, otherNS, "victim")); code != http.StatusForbidden || !strings.Contains(body, want) {
		t.Errorf("diff of a render outside the project: status %d, want 403 with\n%s\n%s", code, want, body)
	}

	code, body = diffPage(permittedApp)
	if code != http.StatusOK || !strings.Contains(body, "Diff: live → desired at") || !strings.Contains(body, "/ConfigMap "+own+"/own") {
		t.Errorf("diff within the project: status %d, want 200 with the ConfigMap:\n%s", code, body)
	}

	// A live object outside the project claims to be the permitted
	// Application's, in tollgate's own namespace (which the webhook does
	// not judge): the prune candidate refuses the diff.
	create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: secretNS, Name: "forged-" + suffix, Annotations: map[string]string{
		v1alpha1.AnnotationKeyTrackingID: fmt.Sprintf("%s:/ConfigMap:%s/forged-%s", permittedApp.Name, secretNS, suffix),
	}}, Data: map[string]string{"key": value}})
	code, body = diffPage(permittedApp)
	want := refused(destinationDenied(permittedApp.Name, secretNS, "forged-"+suffix) + "\n" +
		fmt.Sprintf(`[protected-namespace] ConfigMap/%s/forged-%s: ConfigMap "forged-%s" of Application %q lands in the protected namespace %q; deploy it into a namespace of the team`,
			secretNS, suffix, suffix, permittedApp.Name, secretNS))
	if code != http.StatusForbidden || !strings.Contains(body, want) {
		t.Errorf("diff with a forged prune candidate: status %d, want 403 with\n%s\n%s", code, want, body)
	}
}

// create creates obj as the administrator and deletes it when the test
// ends (an Application without its finalizers).
func create(t *testing.T, obj client.Object) {
	t.Helper()
	testutil.Create(t, admin, obj)
	if app, ok := obj.(*v1alpha1.Application); ok {
		// Runs before testutil.Create's deletion: cleanups run last first.
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 10*time.Second)
			defer cancel()
			_ = admin.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
		})
	}
}
