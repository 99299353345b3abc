package devstack

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
)

// How long the tour waits for each expectation. The controller of the dev
// stack compares every few seconds (tollgate dev sets --resync), so these
// are generous ceilings, not expected durations.
const (
	syncTimeout   = 5 * time.Minute
	refuseTimeout = 2 * time.Minute
	healTimeout   = 2 * time.Minute
	auditTimeout  = 2 * time.Minute
	tourPoll      = 500 * time.Millisecond
)

// badChange is a case of examples/bad/ the tour pushes to a synced
// Application: files of the case (relative to examples/bad/<Case>) written
// to paths of the repository.
type badChange struct {
	Case  string
	App   string
	Files map[string]string
}

// badChanges are the cases that change what a synced Application renders.
// The others create a new Application (argocd-destination, source-repo):
// the tour shows them at the webhook (badApplications), since the dev
// stack's Applications are not themselves synced from Git. secret-generator
// is a Kustomize variant of plaintext-secret, shown by `make demo-cli`.
var badChanges = []badChange{
	{Case: "latest-tag", App: "guestbook-dev", Files: map[string]string{"deployment.yaml": "apps/guestbook/base/deployment.yaml"}},
	{Case: "plaintext-secret", App: "billing", Files: map[string]string{"secret.yaml": "apps/billing/db-secret.yaml"}},
	{Case: "networkpolicy", App: "billing", Files: map[string]string{"apps/billing-network/networkpolicy.yaml": "apps/billing/networkpolicy.yaml"}},
	{Case: "clusterrole", App: "billing", Files: map[string]string{"apps/billing-rbac/clusterrole.yaml": "apps/billing/clusterrole.yaml"}},
	{Case: "self-exemption", App: "billing", Files: map[string]string{"apps/billing-admin/clusterrolebinding.yaml": "apps/billing/clusterrolebinding.yaml"}},
}

// badApplications are the cases whose bad change is a new Application,
// applied with kubectl and refused by the webhook.
var badApplications = []string{"argocd-destination", "source-repo", "operation-fence"}

// Tour runs the scripted tour on a stack whose webhook and controller run
// and whose Applications Install created. It narrates in plain words, with
// the commands a user can type to see the same, and returns an error naming
// the first step whose expectation was not met.
func (s *Stack) Tour(ctx context.Context, con *Console, apps []string) error {
	steps := []struct {
		title string
		run   func(context.Context, *Console, []string) error
	}{
		{"the example Applications sync and become Healthy", s.tourSync},
		{"the webhook refuses bad objects at the API server", s.tourWebhook},
		{"bad commits are refused by the sync gate, nothing applied; each is reverted", s.tourBadCommits},
		{"after the reverts every Application is Synced and Healthy at the latest commit", s.tourReverted},
		{"a live edit of a synced object is healed", s.tourSelfHeal},
		{"the audit reports what was written while no webhook ran", s.tourAudit},
	}
	start := time.Now()
	for i, st := range steps {
		s.catchUp(ctx)
		con.Printf("\n== Step %d/%d: %s", i+1, len(steps), st.title)
		if err := st.run(ctx, con, apps); err != nil {
			s.catchUp(ctx)
			con.Printf("   FAILED: %v", err)
			return fmt.Errorf("tour step %d (%s): %w", i+1, st.title, err)
		}
	}
	s.catchUp(ctx)
	con.Printf("\n== Tour passed: %d of %d steps met their expectations (%s)", len(steps), len(steps), time.Since(start).Round(time.Second))
	return nil
}

// tourSync asks for a sync of the manual Applications and waits until
// every Application is Synced and Healthy.
func (s *Stack) tourSync(ctx context.Context, con *Console, apps []string) error {
	for _, name := range apps {
		app, err := s.app(ctx, name)
		if err != nil {
			return err
		}
		if app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.Automated != nil {
			con.Printf("   %s syncs by itself (automated, prune, self-heal)", name)
			continue
		}
		con.Printf("   %s is synced by hand; the tour runs: tollgate app sync %s", name, name)
		if err := s.requestSync(ctx, name); err != nil {
			return err
		}
	}
	for _, name := range apps {
		if err := s.waitApp(ctx, name, syncTimeout, "Synced and Healthy", syncedAndHealthy); err != nil {
			return err
		}
	}
	s.catchUp(ctx)
	con.Printf("   ok: %d Applications Synced and Healthy", len(apps))
	con.Printf("   see for yourself: kubectl --kubeconfig %s get applications -A", s.Kubeconfig)
	con.Printf("                     bin/tollgate app get billing --kubeconfig %s", s.Kubeconfig)
	return nil
}

// tourWebhook creates Deployments and Applications as a kubectl user would.
func (s *Stack) tourWebhook(ctx context.Context, con *Console, _ []string) error {
	ns := "default"
	con.Printf("   kubectl create deployment tour-latest --image=nginx:latest -n %s", ns)
	err := s.Client.Create(ctx, tourDeployment(ns, "tour-latest", "nginx:latest"))
	if err := expectDenied(err, "no-latest-tag"); err != nil {
		return err
	}
	s.catchUp(ctx)
	con.Printf("   ok: refused by the webhook with [no-latest-tag]; kubectl prints: %s", firstLine(err.Error()))
	con.Printf("   kubectl create deployment tour-pinned --image=nginx:1.27.3 -n %s", ns)
	pinned := tourDeployment(ns, "tour-pinned", "nginx:1.27.3")
	if err := s.Client.Create(ctx, pinned); err != nil {
		return fmt.Errorf("a pinned image was refused: %w", err)
	}
	con.Printf("   ok: admitted")
	if err := s.Client.Delete(ctx, pinned); err != nil {
		return fmt.Errorf("delete %s: %w", pinned.Name, err)
	}
	for _, c := range badApplications {
		want, err := s.caseRules(c)
		if err != nil {
			return err
		}
		path := filepath.Join(s.opts.Examples, "bad", c, "application.yaml")
		objs, err := readObjects(path, s.rewrite)
		if err != nil {
			return err
		}
		con.Printf("   kubectl apply -f %s", path)
		for _, o := range objs {
			err := s.Client.Create(ctx, o)
			if err := expectDenied(err, want...); err != nil {
				return fmt.Errorf("examples/bad/%s: %w", c, err)
			}
			con.Printf("   ok: refused by the webhook with [%s]", strings.Join(want, "], ["))
		}
	}
	return nil
}

// tourBadCommits pushes each bad change, expects the gate to refuse it with
// the case's rules and the live objects to stay as they were, then pushes
// its revert and expects the Application Synced and Healthy again.
func (s *Stack) tourBadCommits(ctx context.Context, con *Console, _ []string) error {
	for _, bc := range badChanges {
		if err := s.tourBadCommit(ctx, con, bc); err != nil {
			return fmt.Errorf("examples/bad/%s: %w", bc.Case, err)
		}
	}
	return nil
}

func (s *Stack) tourBadCommit(ctx context.Context, con *Console, bc badChange) error {
	want, err := s.caseRules(bc.Case)
	if err != nil {
		return err
	}
	files := map[string][]byte{}
	for from, to := range bc.Files {
		data, err := os.ReadFile(filepath.Join(s.opts.Examples, "bad", bc.Case, from))
		if err != nil {
			return err
		}
		files[to] = s.rewrite(to, data)
	}
	before, err := s.liveVersions(ctx, bc.App)
	if err != nil {
		return err
	}
	con.Printf("\n   git push: examples/bad/%s into %s (expect %s)", bc.Case, strings.Join(sortedValues(bc.Files), ", "), strings.Join(want, ", "))
	sha, err := s.Repo.Commit(ctx, files, nil, "Bad change: examples/bad/"+bc.Case)
	if err != nil {
		return err
	}
	if err := s.syncIfManual(ctx, con, bc.App); err != nil {
		return err
	}
	if err := s.waitApp(ctx, bc.App, refuseTimeout, "PolicyViolation with "+strings.Join(want, ", "), func(app *v1alpha1.Application) bool {
		msg := conditionMessage(app, v1alpha1.ApplicationConditionPolicyViolation)
		for _, r := range want {
			if !strings.Contains(msg, "["+r+"]") {
				return false
			}
		}
		return msg != ""
	}); err != nil {
		return err
	}
	after, err := s.liveVersions(ctx, bc.App)
	if err != nil {
		return err
	}
	if changed := diffVersions(before, after); len(changed) > 0 {
		return fmt.Errorf("commit %s was refused but live objects changed: %s", short(sha), strings.Join(changed, ", "))
	}
	s.catchUp(ctx)
	con.Printf("   ok: %s refused commit %s with %s; its %d live objects are unchanged (same resourceVersions)", bc.App, short(sha), strings.Join(want, ", "), len(after))
	con.Printf("   see for yourself: bin/tollgate app get %s --kubeconfig %s", bc.App, s.Kubeconfig)
	if s.UIURL != "" {
		con.Printf("   or in the web UI: %s/applications/%s/%s", s.UIURL, ArgoCDNamespace, bc.App)
	}
	rev, err := s.Repo.Revert(ctx, sha)
	if err != nil {
		return err
	}
	con.Printf("   git push: revert of %s as %s", short(sha), short(rev))
	if err := s.waitApp(ctx, bc.App, syncTimeout, "Synced and Healthy at "+short(rev)+" without PolicyViolation", func(app *v1alpha1.Application) bool {
		return syncedAndHealthy(app) && app.Status.Sync.Revision == rev &&
			conditionMessage(app, v1alpha1.ApplicationConditionPolicyViolation) == ""
	}); err != nil {
		return err
	}
	s.catchUp(ctx)
	con.Printf("   ok: %s is Synced and Healthy again at %s", bc.App, short(rev))
	return nil
}

// tourReverted checks that every Application is back where it was: Synced
// and Healthy at the head of main, no policy violation left.
func (s *Stack) tourReverted(ctx context.Context, con *Console, apps []string) error {
	head := s.Repo.Head()
	for _, name := range apps {
		if err := s.waitApp(ctx, name, syncTimeout, "Synced and Healthy at "+short(head), func(app *v1alpha1.Application) bool {
			return syncedAndHealthy(app) && app.Status.Sync.Revision == head &&
				conditionMessage(app, v1alpha1.ApplicationConditionPolicyViolation) == ""
		}); err != nil {
			return err
		}
	}
	s.catchUp(ctx)
	con.Printf("   ok: %d Applications Synced and Healthy at %s, the revert of the last bad change", len(apps), short(head))
	con.Printf("   see for yourself: kubectl --kubeconfig %s get applications -A", s.Kubeconfig)
	return nil
}

// tourSelfHeal scales a Deployment of a self-healing Application by hand
// and waits until the engine put Git's replicas back.
func (s *Stack) tourSelfHeal(ctx context.Context, con *Console, _ []string) error {
	const name = "guestbook-dev"
	app, err := s.app(ctx, name)
	if err != nil {
		return err
	}
	var key types.NamespacedName
	for _, r := range app.Status.Resources {
		if r.Group == "apps" && r.Kind == "Deployment" {
			key = types.NamespacedName{Namespace: r.Namespace, Name: r.Name}
		}
	}
	if key.Name == "" {
		return fmt.Errorf("%s has no Deployment", name)
	}
	var d appsv1.Deployment
	if err := s.Client.Get(ctx, key, &d); err != nil {
		return fmt.Errorf("get deployment %s: %w", key, err)
	}
	want := ptr.Deref(d.Spec.Replicas, 1)
	edited := want + 4
	con.Printf("   kubectl -n %s scale deployment %s --replicas %d   (Git says %d)", key.Namespace, key.Name, edited, want)
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, edited)
	if err := s.Client.Patch(ctx, &d, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("scale deployment %s: %w", key, err)
	}
	err = poll(ctx, healTimeout, func(ctx context.Context) (bool, string, error) {
		if err := s.Client.Get(ctx, key, &d); err != nil {
			return false, "", err
		}
		got := ptr.Deref(d.Spec.Replicas, 1)
		return got == want, fmt.Sprintf("replicas %d", got), nil
	})
	if err != nil {
		return fmt.Errorf("deployment %s not healed to %d replicas: %w", key, want, err)
	}
	if err := s.waitApp(ctx, name, syncTimeout, "Synced and Healthy", syncedAndHealthy); err != nil {
		return err
	}
	s.catchUp(ctx)
	con.Printf("   ok: self-heal put %s back to %d replicas", key.Name, want)
	return nil
}

// requestSync sets operation.sync, as `tollgate app sync` does.
func (s *Stack) requestSync(ctx context.Context, name string) error {
	return appops.Sync(ctx, s.Client, types.NamespacedName{Namespace: ArgoCDNamespace, Name: name}, appops.SyncOptions{}, AdminUser)
}

// syncIfManual requests a sync of an Application without automated sync
// once its running operation, if any, finished.
func (s *Stack) syncIfManual(ctx context.Context, con *Console, name string) error {
	app, err := s.app(ctx, name)
	if err != nil {
		return err
	}
	if app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.Automated != nil {
		con.Printf("   %s syncs by itself: the controller sees the new commit", name)
		return nil
	}
	if err := s.waitApp(ctx, name, syncTimeout, "no operation in progress", func(a *v1alpha1.Application) bool { return a.Operation == nil }); err != nil {
		return err
	}
	con.Printf("   tollgate app sync %s", name)
	return s.requestSync(ctx, name)
}

func (s *Stack) app(ctx context.Context, name string) (*v1alpha1.Application, error) {
	app := &v1alpha1.Application{}
	if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ArgoCDNamespace, Name: name}, app); err != nil {
		return nil, fmt.Errorf("get application %s: %w", name, err)
	}
	return app, nil
}

// waitApp polls Application name until ok, failing after timeout with
// what it waited for and the Application's last state.
func (s *Stack) waitApp(ctx context.Context, name string, timeout time.Duration, what string, ok func(*v1alpha1.Application) bool) error {
	err := poll(ctx, timeout, func(ctx context.Context) (bool, string, error) {
		app, err := s.app(ctx, name)
		if err != nil {
			return false, "", err
		}
		return ok(app), appSummary(app), nil
	})
	if err != nil {
		return fmt.Errorf("%s not %s: %w", name, what, err)
	}
	return nil
}

// poll calls f until it is done, an error, or timeout; the error then
// carries f's last description of the state.
func poll(ctx context.Context, timeout time.Duration, f func(context.Context) (bool, string, error)) error {
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	err := wait.PollUntilContextCancel(pctx, tourPoll, true, func(ctx context.Context) (bool, error) {
		done, state, err := f(ctx)
		last = state
		return done, err
	})
	if err != nil && ctx.Err() == nil && pctx.Err() != nil {
		return fmt.Errorf("timed out after %s; last seen: %s", timeout, last)
	}
	return err
}

func syncedAndHealthy(app *v1alpha1.Application) bool {
	return app.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && app.Status.Health.Status == v1alpha1.HealthStatusHealthy
}

// appSummary is an Application's state in one line, for timeouts.
func appSummary(app *v1alpha1.Application) string {
	s := fmt.Sprintf("%s/%s at %s", orUnknown(string(app.Status.Sync.Status)), orUnknown(string(app.Status.Health.Status)), short(app.Status.Sync.Revision))
	if op := app.Status.OperationState; op != nil {
		s += fmt.Sprintf("; last operation %s: %s", op.Phase, op.Message)
	}
	for _, c := range app.Status.Conditions {
		s += fmt.Sprintf("; %s: %s", c.Type, firstLine(c.Message))
	}
	return s
}

// liveVersions maps each live object of an Application to its
// resourceVersion.
func (s *Stack) liveVersions(ctx context.Context, name string) (map[string]string, error) {
	app, err := s.app(ctx, name)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range app.Status.Resources {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind})
		if err := s.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: r.Name}, u); err != nil {
			return nil, fmt.Errorf("get %s %s/%s: %w", r.Kind, r.Namespace, r.Name, err)
		}
		out[r.Kind+"/"+r.Namespace+"/"+r.Name] = u.GetResourceVersion()
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no live objects", name)
	}
	return out, nil
}

// diffVersions names the objects whose resourceVersion changed or that
// appeared or disappeared.
func diffVersions(before, after map[string]string) []string {
	var changed []string
	for k, v := range before {
		if after[k] != v {
			changed = append(changed, k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			changed = append(changed, k)
		}
	}
	return changed
}

// caseRules reads the rule ids a case expects from its CASE file.
func (s *Stack) caseRules(name string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(s.opts.Examples, "bad", name, "CASE"))
	if err != nil {
		return nil, err
	}
	first, _, _ := strings.Cut(string(data), "\n")
	return strings.Split(strings.TrimSpace(first), ","), nil
}

// expectDenied checks that err is an admission denial naming every rule.
func expectDenied(err error, rules ...string) error {
	if err == nil {
		return fmt.Errorf("admitted; want a denial by %s", strings.Join(rules, ", "))
	}
	for _, r := range rules {
		if !strings.Contains(err.Error(), "["+r+"]") {
			return fmt.Errorf("want a denial by [%s], got: %w", r, err)
		}
	}
	if !strings.Contains(err.Error(), "denied the request") {
		return errors.Join(errors.New("not a denial by the webhook"), err)
	}
	return nil
}

func tourDeployment(ns, name, image string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}},
			},
		},
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func sortedValues(m map[string]string) []string {
	return slices.Sorted(maps.Values(m))
}
