package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/devstack/gitrepo"
)

// TestForgedHistory: the Application CRD has no status subresource, so
// whoever may update an Application can write history entries. An entry
// naming a repository outside the project's sourceRepos shows no commit
// metadata, only a note, and its commit message never reaches the page,
// while the project's own repository's commit beside it is shown (the
// page does read commits). A rollback to the forged entry is refused by
// the controller before anything is fetched.
func TestForgedHistory(t *testing.T) {
	const secretMessage = "PLATFORM-ONLY: rotate the production database password to hunter2"
	repoURL := exampleRepo(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("platform secrets\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("platform-secrets-%d", time.Now().UnixNano())
	private, err := gitrepo.Import(t.Context(), gitRoot, repoURL[:strings.LastIndex(repoURL, "/")], name, dir, nil, secretMessage)
	if err != nil {
		t.Fatal(err)
	}
	var dev v1alpha1.Application
	if err := admin.Get(t.Context(), types.NamespacedName{Namespace: argoNS, Name: "guestbook-dev"}, &dev); err != nil {
		t.Fatal(err)
	}
	deployed := dev.Status.Sync.Revision
	if deployed == "" {
		t.Fatal("guestbook-dev has no synced revision")
	}

	permitted := v1alpha1.ApplicationSource{RepoURL: repoURL, TargetRevision: "main", Path: "apps/billing"}
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: "ui-test-forged"},
		Spec: v1alpha1.ApplicationSpec{Project: "team-web", Source: &permitted,
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "guestbook-forged"}},
	}
	if err := admin.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.Patch(t.Context(), app, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
		_ = admin.Delete(t.Context(), app)
	})
	// What anyone who may update the Application can write.
	now := metav1.Now()
	edit(t, app.Name, func(a *v1alpha1.Application) {
		a.Status.History = []v1alpha1.RevisionHistory{
			{ID: 1, Source: permitted, Revision: deployed, DeployedAt: now},
			{ID: 2, Source: v1alpha1.ApplicationSource{RepoURL: private.URL(), TargetRevision: "main", Path: "."}, Revision: private.Head(), DeployedAt: now},
			{ID: 3, Source: permitted, Revision: deployed, DeployedAt: now},
		}
	})

	page := proxyUI + "/applications/argocd/" + app.Name
	var body string
	err = wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		var code int
		code, body = get(t, page, alice)
		// The commits of one history are read together: once the
		// permitted one shows, the forged one has been decided.
		return code == http.StatusOK && strings.Contains(body, "Import examples/config-repo"), nil
	})
	if err != nil {
		t.Fatalf("the history never showed the commit of the project's repository:\n%s", body)
	}
	for _, leak := range []string{secretMessage, "PLATFORM-ONLY", "hunter2"} {
		if strings.Contains(body, leak) {
			t.Errorf("the page shows %q of the repository outside the project", leak)
		}
	}
	if !strings.Contains(body, `<div class="note unread">repository not permitted by the project</div>`) {
		t.Errorf("the forged entry lacks its note:\n%s", body)
	}

	// Rollback to the forged entry: the UI writes the operation, the
	// controller refuses it as a sync from outside the project.
	c := browserless(nil)
	csrf := csrfOf(t, c, page, alice)
	if code, body := post(t, c, page+"/rollback", alice, url.Values{"csrf": {csrf}, "id": {"2"}}, map[string]string{"Origin": strings.TrimSuffix(proxyUI, "/")}); code != http.StatusSeeOther {
		t.Fatalf("rollback: status %d, want 303:\n%s", code, body)
	}
	var live v1alpha1.Application
	err = wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(app), &live); err != nil {
			return false, err
		}
		st := live.Status.OperationState
		return live.Operation == nil && st != nil && st.Phase == v1alpha1.OperationFailed, nil
	})
	if err != nil {
		t.Fatalf("the rollback to the forged entry never failed: %+v", live.Status.OperationState)
	}
	want := fmt.Sprintf(`[project-source-denied] Application/argocd/%s: Application "%s" uses source repository "%s", which AppProject "team-web" does not permit`, app.Name, app.Name, private.URL())
	if msg := live.Status.OperationState.Message; !strings.Contains(msg, want) {
		t.Errorf("rollback operation message %q, want it to contain %q", msg, want)
	}
	if n := len(live.Status.History); n != 3 {
		t.Errorf("the refused rollback changed the history: %d entries, want 3", n)
	}
}
