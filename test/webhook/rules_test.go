package webhook_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/webhook"
)

// The two webhooks of config/webhook.
const (
	resourcesHook = "resources.tollgate.dev"
	argoprojHook  = "argoproj.tollgate.dev"
)

func TestDeploymentLatestTag(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	u := newUser(t, "")

	wantDenied(t, u.Create(ctx, deployment(ns, "latest", "nginx:latest")), resourcesHook, "no-latest-tag")
	wantDenied(t, u.Create(ctx, deployment(ns, "untagged", "nginx")), resourcesHook, "no-latest-tag")
	wantDenied(t, u.Create(ctx, deployment(ns, "dry", "nginx:latest"), client.DryRunAll), resourcesHook, "no-latest-tag")

	d := deployment(ns, "pinned", "nginx:1.27.3")
	wantAllowed(t, u.Create(ctx, d))
	if got := u.warnings.take(); len(got) != 0 {
		t.Errorf("warnings on a pinned Deployment: %q", got)
	}

	d.Spec.Template.Spec.Containers[0].Image = "nginx:latest"
	wantDenied(t, u.Update(ctx, d), resourcesHook, "no-latest-tag")

	// A metadata-only change of a Deployment admitted earlier passes even
	// if the rules changed since; here the stored one is pinned anyway.
	d.Spec.Template.Spec.Containers[0].Image = "nginx:1.27.3"
	d.Labels = map[string]string{"team": "web"}
	wantAllowed(t, u.Update(ctx, d))
}

func TestPlaintextSecret(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	u := newUser(t, "")

	wantDenied(t, u.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		StringData: map[string]string{"password": "hunter2"},
	}), resourcesHook, "no-plaintext-secret")

	empty := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "empty"}}
	wantAllowed(t, u.Create(ctx, empty))

	empty.Data = map[string][]byte{"password": []byte("hunter2")}
	wantDenied(t, u.Update(ctx, empty), resourcesHook, "no-plaintext-secret")
}

func TestApplicationIntoArgoCD(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	u := newUser(t, "")
	project := unique(t, ns, "team")
	proj := appProject(project, ns)
	wantAllowed(t, u.Create(ctx, proj))
	waitCached(t, proj)

	wantDenied(t, u.Create(ctx, application(unique(t, ns, "bad"), project, argocdNS)), argoprojHook, "no-argocd-destination")

	app := application(unique(t, ns, "good"), project, ns)
	wantAllowed(t, u.Create(ctx, app))

	if err := unstructured.SetNestedField(app.Object, argocdNS, "spec", "destination", "namespace"); err != nil {
		t.Fatal(err)
	}
	wantDenied(t, u.Update(ctx, app), argoprojHook, "no-argocd-destination")
}

// TestMissingDefaultProject: tollgate creates no "default" AppProject, as
// Argo CD does when it starts; without implicitDefaultProject an
// Application of a missing default project is project-not-found.
func TestMissingDefaultProject(t *testing.T) {
	ns := env.Namespace(t)
	u := newUser(t, "")
	wantDenied(t, u.Create(t.Context(), application(unique(t, ns, "app"), "", ns)), argoprojHook, "project-not-found")
}

func TestApplicationProjectFromCache(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	u := newUser(t, "")
	project := unique(t, ns, "team")

	wantDenied(t, u.Create(ctx, application(unique(t, ns, "early"), project, ns)), argoprojHook, "project-not-found")

	proj := appProject(project, ns)
	wantAllowed(t, u.Create(ctx, proj))
	waitCached(t, proj)

	app := application(unique(t, ns, "app"), project, ns)
	wantAllowed(t, u.Create(ctx, app))
	if got := u.warnings.take(); len(got) != 0 {
		t.Errorf("warnings on an Application in its project: %q", got)
	}

	other := application(unique(t, ns, "elsewhere"), project, "kube-public")
	wantDenied(t, u.Create(ctx, other), argoprojHook, "project-destination-denied")

	if err := unstructured.SetNestedField(app.Object, project+"-gone", "spec", "project"); err != nil {
		t.Fatal(err)
	}
	wantDenied(t, u.Update(ctx, app), argoprojHook, "project-not-found")
}

func TestAppProjectWildcardDestinations(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	u := newUser(t, "")

	wantDenied(t, u.Create(ctx, appProject(unique(t, ns, "wide"), "*")), argoprojHook, "no-argocd-destination")

	proj := appProject(unique(t, ns, "narrow"), ns)
	wantAllowed(t, u.Create(ctx, proj))

	if err := unstructured.SetNestedSlice(proj.Object, []any{
		map[string]any{"server": "*", "namespace": "*"},
	}, "spec", "destinations"); err != nil {
		t.Fatal(err)
	}
	wantDenied(t, u.Update(ctx, proj), argoprojHook, "no-argocd-destination")
}

func TestAppProjectTighteningWarnings(t *testing.T) {
	ctx := t.Context()
	nsA := env.Namespace(t)
	nsB := env.Namespace(t)
	u := newUser(t, "")
	project := unique(t, nsA, "team")

	proj := appProject(project, nsA, nsB)
	wantAllowed(t, u.Create(ctx, proj))
	waitCached(t, proj)
	stays := application(unique(t, nsA, "stays"), project, nsA)
	breaks := application(unique(t, nsA, "breaks"), project, nsB)
	for _, app := range []*unstructured.Unstructured{stays, breaks} {
		wantAllowed(t, u.Create(ctx, app))
		waitCached(t, app)
	}
	u.warnings.take()

	if err := unstructured.SetNestedSlice(proj.Object, []any{
		map[string]any{"server": "https://kubernetes.default.svc", "namespace": nsA},
	}, "spec", "destinations"); err != nil {
		t.Fatal(err)
	}
	wantAllowed(t, u.Update(ctx, proj))
	got := u.warnings.take()
	wantWarning(t, got, fmt.Sprintf("application %q would violate [project-destination-denied] ", breaks.GetName()))
	for _, w := range got {
		if strings.Contains(w, stays.GetName()) {
			t.Errorf("warning about an Application the change does not break: %q", w)
		}
	}

	wantAllowed(t, u.Delete(ctx, proj))
	wantWarning(t, u.warnings.take(), fmt.Sprintf("AppProject %q is still used by 2 Application(s)", project))
}

func TestTrackedObjectProjectDestination(t *testing.T) {
	ctx := t.Context()
	inside := env.Namespace(t)
	outside := env.Namespace(t)
	u := newUser(t, "")
	project := unique(t, inside, "team")
	appName := unique(t, inside, "web")

	proj := appProject(project, inside)
	wantAllowed(t, u.Create(ctx, proj))
	waitCached(t, proj) // the Application is judged against it
	app := application(appName, project, inside)
	wantAllowed(t, u.Create(ctx, app))
	waitCached(t, app)

	tracked := func(ns string) client.Object {
		d := deployment(ns, "api", "nginx:1.27.3")
		d.Annotations = map[string]string{
			webhook.TrackingIDAnnotation: fmt.Sprintf("%s:apps/Deployment:%s/api", appName, ns),
		}
		return d
	}
	wantAllowed(t, u.Create(ctx, tracked(inside)))
	wantDenied(t, u.Create(ctx, tracked(outside)), resourcesHook, "project-destination-denied")
}

func TestExemptions(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)

	admin := newUser(t, "")
	wantAllowed(t, admin.Create(ctx, deployment(exemptNS, unique(t, ns, "legacy"), "nginx:latest")))

	bot := newUser(t, exemptSA)
	wantAllowed(t, bot.Create(ctx, deployment(ns, "by-deployer", "nginx:latest")))

	intruder := newUser(t, otherSA)
	wantDenied(t, intruder.Create(ctx, deployment(ns, "by-intruder", "nginx:latest")), resourcesHook, "no-latest-tag")
}

func TestFailurePolicy(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	u := newUser(t, "")

	// resources.tollgate.dev fails open: the Deployment is admitted although
	// it would be denied.
	d := deployment(ns, "unjudged", "nginx:latest")
	d.Labels = map[string]string{failLabel: "true"}
	wantAllowed(t, u.Create(ctx, d))

	// argoproj.tollgate.dev fails closed.
	app := application(unique(t, ns, "unjudged"), "", ns)
	app.SetLabels(map[string]string{failLabel: "true"})
	err := u.Create(ctx, app)
	if err == nil {
		t.Fatal("Application admitted while the webhook failed, want failurePolicy Fail to reject it")
	}
	for _, want := range []string{fmt.Sprintf("failed calling webhook %q", argoprojHook), "injected failure"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error = %v\nwant it to contain %q", err, want)
		}
	}
}
