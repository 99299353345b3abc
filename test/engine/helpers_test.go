package engine_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/envtest"
	"github.com/tollgate-dev/tollgate/test/gitserver"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// timeout bounds every wait for the engine: a few resyncs plus a slow
// machine.
const timeout = 60 * time.Second

// inCluster is the in-cluster destination server.
const inCluster = "https://kubernetes.default.svc"

// poll is how the tests wait for the engine: a few resyncs plus a slow
// machine, checked every 200ms.
var poll = testutil.Poll{Timeout: timeout, Interval: 200 * time.Millisecond}

// eventually waits until cond holds (poll.Eventually). It is the only way
// tests wait: never a bare sleep used as an assertion.
func eventually(t *testing.T, desc string, cond func() (bool, string)) {
	t.Helper()
	poll.Eventually(t, desc, cond)
}

// consistently checks that cond holds over d (a number of resyncs), failing
// at the first time it does not (poll.Consistently).
func consistently(t *testing.T, desc string, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	poll.Consistently(t, desc, d, cond)
}

// fixture is one test's world: a destination namespace, a Git server with
// one repository, an AppProject and an Application, all named after the
// namespace so that tests never share anything.
type fixture struct {
	t *testing.T
	// cp is the control-plane namespace of the Application and AppProject:
	// argoNS, or strictNS for the engine with default repository options.
	cp      string
	ns      string
	git     *gitserver.Server
	repo    string
	repoURL string
	name    string
	// head is the commit SHA holding the files given to newFixture.
	head string
	// repos are the repositories the AppProject allows.
	repos []string
	// editProject, when set, changes the AppProject before project creates
	// it.
	editProject func(*v1alpha1.AppProject)
}

// newFixture creates the namespace and a repository holding files on a Git
// server with opts, and starts the stand-ins for the controllers envtest
// does not run.
func newFixture(t *testing.T, files map[string]string, opts ...gitserver.Option) *fixture {
	t.Helper()
	ns := env.Namespace(t)
	f := &fixture{t: t, cp: argoNS, ns: ns, git: gitserver.New(t, opts...), repo: "config", name: ns}
	f.repoURL = f.git.CreateRepo(t, f.repo, map[string]string{"README.md": "test configuration\n"})
	f.head = f.git.Commit(t, f.repo, files, "add manifests")
	f.repos = []string{f.repoURL}
	go fakeControllers(t.Context(), ns)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the engines' last log lines about %s:\n%s", ns, logsOf(ns, 60))
		}
	})
	return f
}

// edit reads obj again by its key, changes it with fn and updates it,
// again on a conflict: the engine writes Applications and
// ApplicationSets meanwhile.
func edit[T client.Object](t *testing.T, obj T, fn func(T)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		fn(obj)
		return env.Client.Update(t.Context(), obj)
	})
	if err != nil {
		t.Fatalf("update %s: %v", obj.GetName(), err)
	}
}

// logsOf returns the last n lines of engineLog that mention s.
func logsOf(s string, n int) string {
	data, err := os.ReadFile(engineLog)
	if err != nil {
		return err.Error()
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, s) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// project creates the AppProject of the fixture: this repository, this
// namespace on the in-cluster destination.
func (f *fixture) project() {
	f.t.Helper()
	p := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: f.name, Namespace: f.cp},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  f.repos,
			Destinations: []v1alpha1.ApplicationDestination{{Server: inCluster, Namespace: f.ns}},
		},
	}
	if f.editProject != nil {
		f.editProject(p)
	}
	f.create(p)
}

// application creates the Application of the fixture: path manifests at
// main, automated with the given policy, after mutate. Its automated syncs
// are not retried (retry limit 0), so a test sees a failure at once;
// Argo CD's default of 5 retries is TestSyncRetry's.
func (f *fixture) application(auto *v1alpha1.SyncPolicyAutomated, mutate func(*v1alpha1.Application)) {
	f.t.Helper()
	f.project()
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: f.name, Namespace: f.cp},
		Spec: v1alpha1.ApplicationSpec{
			Project:     f.name,
			Source:      &v1alpha1.ApplicationSource{RepoURL: f.repoURL, Path: "manifests", TargetRevision: gitserver.DefaultBranch},
			Destination: v1alpha1.ApplicationDestination{Server: inCluster, Namespace: f.ns},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: auto, Retry: &v1alpha1.RetryStrategy{}},
		},
	}
	if mutate != nil {
		mutate(app)
	}
	f.create(app)
}

// create creates obj and deletes it when the test ends (removing
// finalizers of Applications, so that a failed test leaves nothing stuck).
func (f *fixture) create(obj client.Object) {
	f.t.Helper()
	if err := env.Client.Create(f.t.Context(), obj); err != nil {
		f.t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
	f.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if app, ok := obj.(*v1alpha1.Application); ok {
			_ = env.Client.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
		}
		_ = env.Client.Delete(ctx, obj)
	})
}

// app reads the Application.
func (f *fixture) app() *v1alpha1.Application {
	f.t.Helper()
	var app v1alpha1.Application
	if err := env.Client.Get(f.t.Context(), client.ObjectKey{Namespace: f.cp, Name: f.name}, &app); err != nil {
		f.t.Fatalf("get application: %v", err)
	}
	return &app
}

// waitApp waits until cond holds for the Application and returns it.
func (f *fixture) waitApp(desc string, cond func(*v1alpha1.Application) bool) *v1alpha1.Application {
	f.t.Helper()
	var last *v1alpha1.Application
	eventually(f.t, "application "+desc, func() (bool, string) {
		last = f.app()
		return cond(last), describeApp(last)
	})
	return last
}

// waitSynced waits until the Application is Synced and Healthy at rev and
// its last operation succeeded.
func (f *fixture) waitSynced(rev string) *v1alpha1.Application {
	f.t.Helper()
	return f.waitApp("Synced and Healthy at "+rev, func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.Sync.Revision == rev &&
			a.Status.Health.Status == v1alpha1.HealthStatusHealthy &&
			st != nil && st.Phase == v1alpha1.OperationSucceeded && st.SyncResult != nil && st.SyncResult.Revision == rev
	})
}

// describeApp summarizes an Application for failure messages.
func describeApp(a *v1alpha1.Application) string {
	var b strings.Builder
	fmt.Fprintf(&b, "sync=%s rev=%.7s health=%s", a.Status.Sync.Status, a.Status.Sync.Revision, a.Status.Health.Status)
	if a.Status.Health.Message != "" {
		fmt.Fprintf(&b, " (%s)", a.Status.Health.Message)
	}
	if st := a.Status.OperationState; st != nil {
		fmt.Fprintf(&b, " op=%s %q", st.Phase, st.Message)
	}
	for _, c := range a.Status.Conditions {
		fmt.Fprintf(&b, " [%s: %s]", c.Type, c.Message)
	}
	return b.String()
}

// condition returns the message of the Application's condition typ.
func condition(a *v1alpha1.Application, typ string) (string, bool) {
	for _, c := range a.Status.Conditions {
		if c.Type == typ {
			return c.Message, true
		}
	}
	return "", false
}

// refresh sets the refresh annotation, as `argocd app get --refresh` does.
func (f *fixture) refresh() {
	f.t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"` + v1alpha1.AnnotationKeyRefresh + `":"normal"}}}`)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: f.name, Namespace: f.cp}}
	if err := env.Client.Patch(f.t.Context(), app, client.RawPatch(types.MergePatchType, patch)); err != nil {
		f.t.Fatalf("refresh application: %v", err)
	}
}

// push commits files, pushes, and notifies the engine through its Git push
// webhook with a signed GitHub push payload, as GitHub would.
func (f *fixture) push(files map[string]string, del []string, msg string) string {
	f.t.Helper()
	sha := f.git.CommitOn(f.t, f.repo, gitserver.DefaultBranch, files, del, msg)
	if a := f.notifyPush(sha); !slices.Contains(a.Refreshed, f.name) {
		f.t.Fatalf("push webhook: refreshed %v, message %q; want %s refreshed", a.Refreshed, a.Message, f.name)
	}
	return sha
}

// pushAnswer is the Git push webhook's answer.
type pushAnswer struct {
	Refreshed                []string `json:"refreshed"`
	RefreshedApplicationSets []string `json:"refreshedApplicationSets"`
	Message                  string   `json:"message"`
}

// notifyPush posts the push of sha to the engine's Git push webhook and
// returns its answer, which must be 200.
func (f *fixture) notifyPush(sha string) pushAnswer {
	f.t.Helper()
	return f.notify("push", map[string]any{
		"ref":        "refs/heads/" + gitserver.DefaultBranch,
		"after":      sha,
		"repository": map[string]any{"clone_url": f.repoURL, "html_url": strings.TrimSuffix(f.repoURL, ".git")},
	})
}

// notify posts a GitHub event with payload, signed, to the engine's Git
// webhook and returns its answer, which must be 200.
func (f *fixture) notify(event string, payload any) pushAnswer {
	f.t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		f.t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(f.t.Context(), http.MethodPost, webhookURL, bytes.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	mac := hmac.New(sha256.New, []byte(webhookSecret))
	mac.Write(body)
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatalf("post %s webhook: %v", event, err)
	}
	defer resp.Body.Close()
	var a pushAnswer
	_ = json.NewDecoder(resp.Body).Decode(&a)
	if resp.StatusCode != http.StatusOK {
		f.t.Fatalf("%s webhook: status %d, message %q; want 200", event, resp.StatusCode, a.Message)
	}
	return a
}

// clusterSecret registers an Argo CD cluster Secret in argoNS, named by
// data's name, with data (name, server and any other key) and the key
// config: the test control plane's administrator certificate, so that
// whatever URL of it server gives, the engine reaches it as it reaches any
// other cluster.
func (f *fixture) clusterSecret(data map[string]string) {
	f.t.Helper()
	cc, err := json.Marshal(map[string]any{"tlsClientConfig": map[string]any{
		"caData": env.Config.CAData, "certData": env.Config.CertData, "keyData": env.Config.KeyData,
	}})
	if err != nil {
		f.t.Fatal(err)
	}
	data["config"] = string(cc)
	f.create(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: data["name"], Namespace: argoNS, Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}},
		StringData: data,
	})
}

// get reads the object name of obj's type in the fixture's namespace.
func (f *fixture) get(obj client.Object, name string) error {
	return env.Client.Get(f.t.Context(), client.ObjectKey{Namespace: f.ns, Name: name}, obj)
}

// gone reports whether the object is absent (or being deleted).
func (f *fixture) gone(obj client.Object, name string) (bool, string) {
	err := f.get(obj, name)
	switch {
	case apierrors.IsNotFound(err):
		return true, ""
	case err != nil:
		return false, err.Error()
	case obj.GetDeletionTimestamp() != nil:
		return true, ""
	}
	return false, fmt.Sprintf("%s still exists", name)
}

// deploymentImage returns the image of the first container of Deployment
// name.
func (f *fixture) deploymentImage(name string) string {
	var d appsv1.Deployment
	if err := f.get(&d, name); err != nil || len(d.Spec.Template.Spec.Containers) == 0 {
		return ""
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

// fakeControllers stands in, for one namespace, for what envtest does not
// run: there is no kube-controller-manager and no kubelet. It marks every
// Deployment rolled out and available (writing its status subresource, as
// the deployment controller would once the pods ran), and removes the
// foregroundDeletion finalizer of objects being deleted (what the garbage
// collector does once dependents are gone; these objects have none).
func fakeControllers(ctx context.Context, ns string) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(150 * time.Millisecond):
		}
		var deps appsv1.DeploymentList
		if err := env.Client.List(ctx, &deps, client.InNamespace(ns)); err == nil {
			for i := range deps.Items {
				envtest.MarkAvailable(ctx, env.Client, &deps.Items[i])
			}
		}
		for _, list := range []client.ObjectList{&appsv1.DeploymentList{}, &corev1.ConfigMapList{}, &corev1.ServiceList{}, &corev1.SecretList{}} {
			if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
				continue
			}
			_ = forEachObject(list, func(o client.Object) {
				if o.GetDeletionTimestamp() != nil && slices.Contains(o.GetFinalizers(), metav1.FinalizerDeleteDependents) {
					patch := []byte(`{"metadata":{"finalizers":null}}`)
					_ = env.Client.Patch(ctx, o, client.RawPatch(types.MergePatchType, patch))
				}
			})
		}
	}
}

func forEachObject(list client.ObjectList, fn func(client.Object)) error {
	switch l := list.(type) {
	case *appsv1.DeploymentList:
		for i := range l.Items {
			fn(&l.Items[i])
		}
	case *corev1.ConfigMapList:
		for i := range l.Items {
			fn(&l.Items[i])
		}
	case *corev1.ServiceList:
		for i := range l.Items {
			fn(&l.Items[i])
		}
	case *corev1.SecretList:
		for i := range l.Items {
			fn(&l.Items[i])
		}
	default:
		return fmt.Errorf("unexpected list %T", list)
	}
	return nil
}

// Manifests of the test repositories.

func configMap(name, value string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
data:
  key: %q
`, name, value)
}

func deployment(name, image string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  labels:
    app: %[1]s
spec:
  replicas: %[3]d
  selector:
    matchLabels:
      app: %[1]s
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      containers:
      - name: web
        image: %[2]s
        ports:
        - containerPort: 8080
`, name, image, replicas)
}

func service(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: %[1]s
spec:
  selector:
    app: %[1]s
  ports:
  - port: 80
    targetPort: 8080
`, name)
}

// baseFiles is the repository of most tests: a ConfigMap, a Deployment and
// a Service.
func baseFiles() map[string]string {
	return map[string]string{
		"manifests/configmap.yaml":  configMap("settings", "v1"),
		"manifests/deployment.yaml": deployment("web", "registry.example.com/web:1.0.0", 2),
		"manifests/service.yaml":    service("web"),
	}
}
