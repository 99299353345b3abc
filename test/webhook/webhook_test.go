// Package webhook_test runs tollgate's admission webhook against a real
// kube-apiserver: the shipped ValidatingWebhookConfiguration
// (config/webhook) is installed, pointing at a webhook server in this test
// process, and the tests create and update objects as a user would, reading
// denials and warnings from the API server's answers.
package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/controlplane"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/test/envtest"
	"github.com/tollgate-dev/tollgate/test/testutil"
	"github.com/tollgate-dev/tollgate/webhook"
)

const (
	argocdNS = "argocd"
	// exemptNS is exempt in the handler's configuration (the shipped
	// namespaceSelector does not know it, so the API server calls us).
	exemptNS = "tollgate-exempt"
	// botsNS holds the service accounts the tests impersonate.
	botsNS = "tollgate-bots"
	// exemptSA is exempt in the handler's configuration; otherSA is not.
	exemptSA = "deployer"
	otherSA  = "intruder"
	// syncSA stands for a sync engine (tollgate's controller, Argo CD's
	// application controller): the webhook's only syncUsers, and its only
	// controllerUsers.
	syncSA = "syncer"
	// failLabel makes the test evaluator fail, to see the failurePolicy.
	failLabel = "tollgate.test/fail-evaluation"
)

var (
	env *envtest.Env
	// reader is the webhook's informer cache, for tests to wait on.
	reader cache.Cache
	// reviews records every request the API server sends the webhook.
	reviews = &recorder{}
	// serve starts a webhook server where the API server calls it, until
	// the returned stop; setup starts the first, for the package.
	serve func(ctx context.Context) (stop func(), err error)
	// stopWebhook stops the webhook server running now.
	stopWebhook func()
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrllog.SetLogger(logr.Discard())
	vwc, err := shippedWebhookConfiguration()
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhook test:", err)
		return 1
	}
	env, err = envtest.Start(envtest.Options{
		Webhooks: crenvtest.WebhookInstallOptions{
			ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{vwc},
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	// The webhook server and the cache stop before the control plane, so
	// that the API server has no webhook connections or watches to drain.
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "envtest: stop:", err)
		}
	}()
	if err := setup(ctx, env); err != nil {
		fmt.Fprintln(os.Stderr, "webhook test: setup:", err)
		return 1
	}
	return m.Run()
}

// shippedWebhookConfiguration reads config/webhook's
// ValidatingWebhookConfiguration.
func shippedWebhookConfiguration() (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return controlplane.ReadWebhookConfiguration(filepath.Join(envtest.RepoRoot(), "config", "webhook", "validating_webhook_configuration.yaml"))
}

// setup creates the fixed namespaces and service accounts, starts the
// informer cache and serves the handler where the API server calls it.
func setup(ctx context.Context, e *envtest.Env) error {
	for _, ns := range []string{argocdNS, exemptNS, botsNS} {
		if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	// The bootstrap "edit" role is aggregated by the controller manager,
	// which envtest does not run: the bots get a role of their own.
	objs := []client.Object{&rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "tollgate-test-writer"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "create", "update"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create", "update"}},
			{APIGroups: []string{"argoproj.io"}, Resources: []string{"applications"}, Verbs: []string{"get", "update"}},
		},
	}}
	for _, sa := range []string{exemptSA, otherSA, syncSA} {
		objs = append(objs,
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: botsNS, Name: sa}},
			&rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "tollgate-test-" + sa},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "tollgate-test-writer"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: botsNS, Name: sa}},
			},
		)
	}
	for _, o := range objs {
		if err := e.Client.Create(ctx, o); err != nil {
			return fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
		}
	}

	scheme, err := testutil.NewScheme()
	if err != nil {
		return err
	}
	c, err := envtest.WebhookCache(ctx, e.Config, cache.Options{
		Scheme: scheme,
		ByObject: map[client.Object]cache.ByObject{
			&v1alpha1.AppProject{}: {Namespaces: map[string]cache.Config{argocdNS: {}}},
		},
	})
	if err != nil {
		return err
	}
	reader = c

	cfg := webhook.DefaultConfig()
	cfg.ExemptNamespaces = append(cfg.ExemptNamespaces, exemptNS)
	cfg.ExemptUsers = append(cfg.ExemptUsers, "system:serviceaccount:"+botsNS+":"+exemptSA)
	cfg.Exemptions = append(cfg.Exemptions, operatorExemption)
	cfg.SyncUsers = []string{"system:serviceaccount:" + botsNS + ":" + syncSA}
	cfg.ControllerUsers = cfg.SyncUsers
	popts := policies.DefaultOptions()
	popts.Config = cfg.Config
	eval, err := policies.New(ctx, popts)
	if err != nil {
		return fmt.Errorf("compile policies: %w", err)
	}
	h, err := webhook.NewHandler(webhook.Options{
		Config:    cfg,
		Evaluator: failOnLabel{eval},
		Reader:    c,
		Namespace: "tollgate-system",
	})
	if err != nil {
		return err
	}

	opts := e.WebhookInstallOptions
	serve = func(ctx context.Context) (func(), error) {
		srv := crwebhook.NewServer(crwebhook.Options{
			Host:    opts.LocalServingHost,
			Port:    opts.LocalServingPort,
			CertDir: opts.LocalServingCertDir,
		})
		srv.Register("/validate", webhook.NewHTTPHandler(reviews.wrap(h), logr.Discard()))
		srvCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := srv.Start(srvCtx); err != nil {
				fmt.Fprintln(os.Stderr, "webhook test: webhook server:", err)
			}
		}()
		started := func(context.Context) (bool, error) { return srv.StartedChecker()(nil) == nil, nil }
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, started); err != nil {
			stop()
			<-done
			return nil, fmt.Errorf("webhook server did not start: %w", err)
		}
		return func() { stop(); <-done }, nil
	}
	stopWebhook, err = serve(ctx)
	return err
}

// failOnLabel fails the evaluation of objects labelled failLabel, so tests
// can see what the API server does when the webhook cannot decide.
type failOnLabel struct{ next webhook.Evaluator }

func (f failOnLabel) Evaluate(ctx context.Context, in policies.Input) (policies.Decision, error) {
	md, _ := in.Object["metadata"].(map[string]any)
	labels, _ := md["labels"].(map[string]any)
	if labels[failLabel] == "true" {
		return policies.Decision{}, errors.New("evaluate policies: injected failure")
	}
	return f.next.Evaluate(ctx, in)
}

// recorder remembers the requests the API server sent the webhook, so that
// tests can tell what the shipped configuration intercepts.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

// wrap returns h recording each request before handling it.
func (r *recorder) wrap(h webhook.Decider) webhook.Decider {
	return webhook.DeciderFunc(func(ctx context.Context, req admission.Request) (admission.Response, error) {
		r.mu.Lock()
		r.seen = append(r.seen, reviewKey(req.Kind.Group, req.Kind.Kind, req.SubResource, req.Namespace, req.Name))
		r.mu.Unlock()
		return h.Decide(ctx, req)
	})
}

// reviewKey names a request: "group/Kind[/subresource] namespace/name".
func reviewKey(group, kind, subResource, ns, name string) string {
	k := group + "/" + kind
	if subResource != "" {
		k += "/" + subResource
	}
	return k + " " + ns + "/" + name
}

// count says how many requests for the object the webhook received. The
// API server calls webhooks before it answers, so a request the webhook was
// sent is recorded by the time the client call returns.
func (r *recorder) count(group, kind, subResource, ns, name string) int {
	key := reviewKey(group, kind, subResource, ns, name)
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, k := range r.seen {
		if k == key {
			n++
		}
	}
	return n
}

// sent reports whether the webhook received a request for the object.
func (r *recorder) sent(group, kind, subResource, ns, name string) bool {
	return r.count(group, kind, subResource, ns, name) > 0
}

// --- clients -----------------------------------------------------------------

// warnings collects the warnings the API server returns.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// take returns tollgate's warnings collected so far and forgets all. The
// API server's own warnings (such as Argo CD's finalizer name not being
// domain-qualified with a path) are dropped.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, s := range w.list {
		if !strings.HasPrefix(s, "metadata.finalizers: ") {
			out = append(out, s)
		}
	}
	w.list = nil
	return out
}

// user is a client as a user has it, with the warnings it was shown.
type user struct {
	client.Client
	warnings *warnings
}

// newUser returns an administrator's client, or one impersonating the
// service account sa of botsNS.
func newUser(t *testing.T, sa string) user {
	t.Helper()
	if sa == "" {
		return newServiceAccountUser(t, "", "")
	}
	return newServiceAccountUser(t, botsNS, sa)
}

// newServiceAccountUser returns a client impersonating the service account
// sa of namespace ns, or an administrator's client when sa is empty.
func newServiceAccountUser(t *testing.T, ns, sa string) user {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	w := &warnings{}
	cfg.WarningHandlerWithContext = w
	if sa != "" {
		cfg.Impersonate = rest.ImpersonationConfig{
			UserName: "system:serviceaccount:" + ns + ":" + sa,
			Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatalf("create client: %v", err)
	}
	return user{Client: c, warnings: w}
}

// --- objects -----------------------------------------------------------------

// deployment is testutil.Deployment: ns/name running image.
var deployment = testutil.Deployment

// newApplication returns an empty Application for users' clients, which
// know only the built-in types.
func newApplication() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.ApplicationGroupVersionKind)
	return u
}

// application returns an Application in argocd with the resources
// finalizer, deploying into destNS.
func application(name, project, destNS string) *unstructured.Unstructured {
	u := newApplication()
	u.SetNamespace(argocdNS)
	u.SetName(name)
	u.SetFinalizers([]string{"resources-finalizer.argocd.argoproj.io"})
	u.Object["spec"] = map[string]any{
		"project": project,
		"source": map[string]any{
			"repoURL":        "https://github.com/example/apps.git",
			"path":           name,
			"targetRevision": "main",
		},
		"destination": map[string]any{
			"server":    "https://kubernetes.default.svc",
			"namespace": destNS,
		},
	}
	return u
}

// appProject returns an AppProject in argocd for the example repositories
// and the given namespaces of the in-cluster server.
func appProject(name string, namespaces ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.AppProjectGroupVersionKind)
	u.SetNamespace(argocdNS)
	u.SetName(name)
	dests := make([]any, len(namespaces))
	for i, ns := range namespaces {
		dests[i] = map[string]any{"server": "https://kubernetes.default.svc", "namespace": ns}
	}
	u.Object["spec"] = map[string]any{
		"sourceRepos":  []any{"https://github.com/example/*"},
		"destinations": dests,
	}
	return u
}

// --- assertions ----------------------------------------------------------------

// wantDenied checks that err is the API server relaying a denial by the
// named webhook that starts with the rule id.
func wantDenied(t *testing.T, err error, hook, rule string) {
	t.Helper()
	if err == nil {
		t.Fatalf("request admitted, want it denied by %s with [%s]", hook, rule)
	}
	want := fmt.Sprintf("admission webhook %q denied the request: [%s] ", hook, rule)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("error = %v\nwant a Forbidden error containing %q", err, want)
	}
}

// wantAllowed checks that err is nil.
func wantAllowed(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("request denied: %v", err)
	}
}

// wantWarning checks that one of the warnings starts with prefix.
func wantWarning(t *testing.T, got []string, prefix string) {
	t.Helper()
	for _, w := range got {
		if strings.HasPrefix(w, prefix) {
			return
		}
	}
	t.Fatalf("warnings %q, want one starting with %q", got, prefix)
}

// poll is how the tests wait for the webhook's cache and the load.
var poll = testutil.Poll{Timeout: 20 * time.Second, Interval: 50 * time.Millisecond}

// waitCached waits until the webhook's cache holds obj, an Application or
// an AppProject, read typed as the handler reads it (an unstructured read
// would start an informer of its own).
func waitCached(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	var cached client.Object
	switch obj.GetKind() {
	case v1alpha1.ApplicationKind:
		cached = &v1alpha1.Application{}
	case v1alpha1.AppProjectKind:
		cached = &v1alpha1.AppProject{}
	default:
		t.Fatalf("waitCached: the webhook caches no %s", obj.GetKind())
	}
	poll.Eventually(t, "the cache to hold "+obj.GetKind()+" "+obj.GetName(), func() (bool, string) {
		if err := reader.Get(t.Context(), client.ObjectKeyFromObject(obj), cached); err != nil {
			return false, err.Error()
		}
		return cached.GetResourceVersion() == obj.GetResourceVersion(), "cached resourceVersion " + cached.GetResourceVersion() + ", want " + obj.GetResourceVersion()
	})
}

// unique returns a name unique to the test, for objects in argocd.
func unique(t *testing.T, ns, suffix string) string {
	t.Helper()
	return strings.TrimSuffix(ns, "-") + "-" + suffix
}
