package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// chromium is Debian's package's binary (make test installs it).
func chromium(t *testing.T) string {
	t.Helper()
	p := cmpOr(os.Getenv("TOLLGATE_CHROMIUM"), "/usr/bin/chromium")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no Chromium at %s (%v): run make browser (Debian's chromium package) or set TOLLGATE_CHROMIUM", p, err)
	}
	return p
}

// browser starts a headless Chromium whose every request names user to
// the proxy UI (empty: no header), and returns its context.
func browser(t *testing.T, user string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1400, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if user != "" {
		if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{userHeader: user}}); err != nil {
			t.Fatalf("set the proxy's header: %v", err)
		}
	}
	return ctx
}

// screenshot writes the page as artifacts/NAME.png.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(artifacts, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Errorf("write %s: %v", path, err)
	}
	t.Logf("screenshot: %s", path)
}

// waitText waits until the text of sel contains every one of want, as the
// page updates itself (the test never reloads it), and returns the text.
func waitText(t *testing.T, ctx context.Context, sel string, timeout time.Duration, want ...string) string {
	t.Helper()
	var text string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		got, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			return false, nil
		}
		text = got
		for _, w := range want {
			if !strings.Contains(text, w) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("%s never showed %q within %s; it shows:\n%s", sel, want, timeout, text)
	}
	return text
}

// waitCount waits until sel matches n elements, as the page updates
// itself.
func waitCount(t *testing.T, ctx context.Context, sel string, n int, timeout time.Duration) {
	t.Helper()
	var got int
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		c, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", sel)))
		got = c
		return err == nil && c == n, nil
	})
	if err != nil {
		t.Fatalf("%s matched %d elements, never %d within %s", sel, got, n, timeout)
	}
}

func navigate(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
}

// TestBrowserList: the list shows the example Applications with their
// sync and health, as alice.
func TestBrowserList(t *testing.T) {
	ctx := browser(t, alice)
	navigate(t, ctx, proxyUI+"/applications")
	waitText(t, ctx, `tr[data-app="argocd/guestbook-dev"]`, 5*time.Minute, "guestbook-dev", "team-web", "Synced", "Healthy")
	waitText(t, ctx, `tr[data-app="argocd/guestbook-prod"]`, 5*time.Minute, "guestbook-prod", "Synced", "Healthy")
	waitText(t, ctx, "header .who", time.Minute, alice)
	screenshot(t, ctx, "applications")
	navigate(t, ctx, proxyUI+"/applications?sync=Synced&q=prod")
	text := waitText(t, ctx, "#apps", time.Minute, "guestbook-prod")
	if strings.Contains(text, "guestbook-dev") {
		t.Errorf("filtered by q=prod, the list still shows guestbook-dev:\n%s", text)
	}
}

// TestBrowserRBAC: bob, whose RBAC does not cover argocd, sees none of its
// Applications and gets 403 on a direct URL; so does a page's event
// stream (tested over HTTP in TestEventsFollowRBAC).
func TestBrowserRBAC(t *testing.T) {
	ctx := browser(t, "bob")
	navigate(t, ctx, proxyUI+"/applications")
	text := waitText(t, ctx, "main", time.Minute, "No Applications that you may see")
	if strings.Contains(text, "guestbook") {
		t.Errorf("bob's list shows Applications of argocd:\n%s", text)
	}
	code, body := get(t, proxyUI+"/applications/argocd/guestbook-dev", "bob")
	if code != 403 || !strings.Contains(body, `User &#34;bob&#34; cannot get resource &#34;applications&#34;`) {
		t.Errorf("bob's direct URL: %d, want 403 naming bob:\n%s", code, body)
	}
	navigate(t, ctx, proxyUI+"/applications/argocd/guestbook-dev")
	waitText(t, ctx, "#error", time.Minute, "cannot get resource")
	screenshot(t, ctx, "forbidden")
	if code, _ := get(t, proxyUI+"/applications/argocd/guestbook-dev", alice); code != 200 {
		t.Errorf("alice's direct URL: %d, want 200", code)
	}
}

// TestBrowserRefused: an Application whose render the gate refuses shows
// the rule id and the object on its page, and is marked in the list.
func TestBrowserRefused(t *testing.T) {
	repo := exampleRepo(t)
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: "ui-refused", Finalizers: []string{"resources-finalizer.argocd.argoproj.io"}},
		Spec: v1alpha1.ApplicationSpec{
			Project: "team-web",
			Source: &v1alpha1.ApplicationSource{RepoURL: repo, Path: "apps/guestbook/overlays/dev", TargetRevision: "main",
				Kustomize: &v1alpha1.ApplicationSourceKustomize{Images: []string{"gcr.io/heptio-images/ks-guestbook-demo:latest"}}},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "guestbook-refused"},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
		},
	}
	if err := admin.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), app) })
	ctx := browser(t, alice)
	navigate(t, ctx, proxyUI+"/applications/argocd/ui-refused")
	text := waitText(t, ctx, "#verdicts", 3*time.Minute, "Refused by the gate", "no-latest-tag", "Deployment/guestbook-dev/guestbook-ui-dev", `uses image "gcr.io/heptio-images/ks-guestbook-demo:latest"`)
	t.Logf("verdicts:\n%s", text)
	screenshot(t, ctx, "refused")
	navigate(t, ctx, proxyUI+"/applications")
	waitText(t, ctx, `tr[data-app="argocd/ui-refused"]`, time.Minute, "refused")
}

// TestBrowserSyncAndRollback: alice presses Sync on the manual billing
// Application and the page, without reloading, shows the sync running and
// then succeeding, and the history names her and the deployed commit's
// author and message; a second sync gives a history to roll back in; once
// automated sync is on, Rollback is disabled with Argo CD's message.
func TestBrowserSyncAndRollback(t *testing.T) {
	ctx := browser(t, alice)
	page := proxyUI + "/applications/argocd/billing"
	for i, n := range []int{1, 2} { // deployments in the history
		navigate(t, ctx, page)
		waitText(t, ctx, "#sync-button", time.Minute, "Sync")
		waitNoOperationRunning(t, "billing")
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#sync-button"))); err != nil {
			t.Fatalf("click Sync: %v", err)
		}
		waitText(t, ctx, "#notice", time.Minute, "Sync requested")
		waitCount(t, ctx, "#history tbody tr", n, 3*time.Minute)
		waitText(t, ctx, "#operation", time.Minute, "Succeeded", "by "+alice, "successfully synced")
		// Who deployed, and the commit's author and message from Git.
		waitText(t, ctx, "#history", time.Minute, alice, "tollgate dev <dev@tollgate.invalid>", "Import examples/config-repo")
		if i == 0 {
			screenshot(t, ctx, "synced")
		}
	}
	disabled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("button.rollback").disabled`))
	if err != nil {
		t.Fatal(err)
	}
	if disabled {
		t.Fatal("Rollback is disabled while automated sync is off")
	}
	edit(t, "billing", func(app *v1alpha1.Application) {
		app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
	})
	t.Cleanup(func() { edit(t, "billing", func(app *v1alpha1.Application) { app.Spec.SyncPolicy = nil }) })
	waitText(t, ctx, "#rollback-refusal", time.Minute, "rollback cannot be initiated when auto-sync is enabled")
	disabled, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("button.rollback").disabled`))
	if err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("button.rollback").title`))
	if err != nil {
		t.Fatal(err)
	}
	if !disabled || title != "rollback cannot be initiated when auto-sync is enabled" {
		t.Errorf("with automated sync, Rollback: disabled %v, title %q", disabled, title)
	}
	screenshot(t, ctx, "rollback-disabled")
}

// exampleRepo is the served repository's URL, as the examples name it.
func exampleRepo(t *testing.T) string {
	t.Helper()
	var app v1alpha1.Application
	if err := admin.Get(t.Context(), types.NamespacedName{Namespace: argoNS, Name: "guestbook-dev"}, &app); err != nil {
		t.Fatal(err)
	}
	return app.Spec.Source.RepoURL
}

// edit changes the Application name with f, retrying a conflict.
func edit(t *testing.T, name string, f func(*v1alpha1.Application)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var app v1alpha1.Application
		if err := admin.Get(ctx, types.NamespacedName{Namespace: argoNS, Name: name}, &app); err != nil {
			return false, err
		}
		f(&app)
		err := admin.Update(ctx, &app)
		return err == nil, client.IgnoreNotFound(ignoreConflict(err))
	})
	if err != nil {
		t.Fatalf("edit %s: %v", name, err)
	}
}

func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// waitNoOperationRunning waits until the Application has no operation.
func waitNoOperationRunning(t *testing.T, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		var app v1alpha1.Application
		if err := admin.Get(ctx, types.NamespacedName{Namespace: argoNS, Name: name}, &app); err != nil {
			return false, err
		}
		return app.Operation == nil, nil
	})
	if err != nil {
		t.Fatalf("%s keeps an operation: %v", name, err)
	}
}
