// Package audit_test runs the audit (webhook/audit and `tollgate audit`)
// against a real API server holding objects that were written while no
// webhook ran.
package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	wgpolicy "github.com/tollgate-dev/tollgate/api/wgpolicyk8s/v1alpha2"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/test/envtest"
	"github.com/tollgate-dev/tollgate/test/testutil"
	"github.com/tollgate-dev/tollgate/webhook"
	"github.com/tollgate-dev/tollgate/webhook/audit"
)

const argoNS = "argocd"

var (
	env *envtest.Env
	// bin is the tollgate binary, built once.
	bin string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tollgate-audit-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := envtest.Run(m, envtest.Options{CRDDirectoryPaths: []string{"config/crd/bases", "config/policyreport/bases"}}, func(e *envtest.Env) error {
		env = e
		var err error
		if bin, err = envtest.BuildTollgate(dir); err != nil {
			return err
		}
		return client.IgnoreAlreadyExists(e.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argoNS}}))
	})
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// scene is what a team left in the cluster while no webhook ran.
type scene struct {
	// inside is the namespace the team's AppProject permits, outside one
	// it does not, exempt one the webhook configuration exempts, and
	// excluded one the webhook configuration's namespaceSelector never
	// sends.
	inside, outside, exempt, excluded string
	project, app                      string
	// webhookConfig is the ValidatingWebhookConfiguration whose
	// namespaceSelector excludes excluded.
	webhookConfig string
}

// excludedLabel marks the namespaces the test's webhook configuration
// does not select.
const excludedLabel = "audit.tollgate.test/excluded"

// newScene writes the scene: an AppProject and its Application, a
// latest-tagged Deployment, a plaintext Secret, a Pod a ReplicaSet owns
// (derived: judged through its owner), and a ConfigMap the Application
// tracks outside its project's destinations, plus latest-tagged
// Deployments in the exempt and the excluded namespace.
func newScene(t *testing.T) scene {
	t.Helper()
	ctx := t.Context()
	s := scene{inside: env.Namespace(t), outside: env.Namespace(t), exempt: env.Namespace(t), excluded: env.Namespace(t)}
	s.project, s.app, s.webhookConfig = s.inside+"-team", s.inside+"-app", s.inside
	var ns corev1.Namespace
	if err := env.Client.Get(ctx, client.ObjectKey{Name: s.excluded}, &ns); err != nil {
		t.Fatal(err)
	}
	ns.Labels[excludedLabel] = "true"
	if err := env.Client.Update(ctx, &ns); err != nil {
		t.Fatal(err)
	}
	testutil.Create(t, env.Client, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: s.webhookConfig},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "resources.tollgate.test", AdmissionReviewVersions: []string{"v1"},
			SideEffects:       ptr.To(admissionregistrationv1.SideEffectClassNone),
			FailurePolicy:     ptr.To(admissionregistrationv1.Ignore),
			ClientConfig:      admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/validate")},
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: excludedLabel, Operator: metav1.LabelSelectorOpDoesNotExist}}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"audit.tollgate.test"}, APIVersions: []string{"v1"}, Resources: []string{"nothing"}},
			}},
		}},
	})
	testutil.Create(t, env.Client, argo("AppProject", s.project, map[string]any{
		"sourceRepos":  []any{"*"},
		"destinations": []any{map[string]any{"server": "https://kubernetes.default.svc", "namespace": s.inside}},
	}))
	testutil.Create(t, env.Client, argo("Application", s.app, map[string]any{
		"project":     s.project,
		"source":      map[string]any{"repoURL": "https://git.example.com/team.git", "path": "apps", "targetRevision": "main"},
		"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": s.inside},
	}))
	for _, n := range []string{s.inside, s.exempt, s.excluded} {
		testutil.Create(t, env.Client, testutil.Deployment(n, "web", "nginx:latest"))
	}
	testutil.Create(t, env.Client, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.inside, Name: "plain"}, StringData: map[string]string{"password": "hunter2"}})
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.inside, Name: "web-abc"},
		Spec: appsv1.ReplicaSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: testutil.Deployment(s.inside, "web", "nginx:1.27.3").Spec.Template,
		},
	}
	testutil.Create(t, env.Client, rs)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.inside, Name: "web-abc-1", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true),
		}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:latest"}}},
	}
	testutil.Create(t, env.Client, pod)
	testutil.Create(t, env.Client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.outside, Name: "settings", Annotations: map[string]string{
		webhook.TrackingIDAnnotation: fmt.Sprintf("%s:/ConfigMap:%s/settings", s.app, s.outside),
	}}})
	return s
}

// writeFiles writes, into dir, an administrator's kubeconfig of the test
// API server and the scene's webhook configuration file, and returns
// their paths.
func (s scene) writeFiles(t *testing.T, dir string) (kubeconfig, configFile string) {
	t.Helper()
	kc, err := env.KubeConfig("admin")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, configFile = filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "webhook.yaml")
	cfg := fmt.Sprintf("exemptNamespaces: [kube-system, kube-public, kube-node-lease, %s]\n", s.exempt)
	for path, data := range map[string][]byte{kubeconfig: kc, configFile: []byte(cfg)} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return kubeconfig, configFile
}

// config is the webhook configuration of the scene: its exempt namespace.
func (s scene) config() webhook.Config {
	cfg := webhook.DefaultConfig()
	cfg.ExemptNamespaces = append(webhook.DefaultExemptNamespaces(), s.exempt)
	return cfg
}

// TestAuditWritesPolicyReports: the violations of objects written while no
// webhook ran appear in the PolicyReport of their namespace with the rule
// id; exempt and excluded namespaces and derived objects are not
// reported; a fix removes its result at the next run, in the same report.
func TestAuditWritesPolicyReports(t *testing.T) {
	s := newScene(t)
	a := newAuditor(t, s)
	res, err := a.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 {
		t.Errorf("failures: %v", res.Failures)
	}
	first := report(t, s.inside)
	want := []string{
		"fail no-latest-tag Deployment/web",
		"fail no-plaintext-secret Secret/plain",
	}
	if diff := cmp.Diff(want, results(first)); diff != "" {
		t.Errorf("PolicyReport %s results (-want +got):\n%s", s.inside, diff)
	}
	// The Application, its AppProject, the ReplicaSet and the Pod of the
	// ReplicaSet (derived) pass or are skipped.
	if first.Summary.Fail != 2 || first.Summary.Pass != 1 {
		t.Errorf("PolicyReport %s summary %+v, want 2 fail and 1 pass (the ReplicaSet)", s.inside, first.Summary)
	}
	outside := report(t, s.outside)
	wantOutside := []string{"fail project-destination-denied ConfigMap/settings"}
	if diff := cmp.Diff(wantOutside, results(outside)); diff != "" {
		t.Errorf("PolicyReport %s results (-want +got):\n%s", s.outside, diff)
	}
	for _, r := range outside.Results {
		if want := fmt.Sprintf("AppProject %q does not permit", s.project); !strings.Contains(r.Description, want) {
			t.Errorf("message %q does not say %q", r.Description, want)
		}
		if r.Severity != wgpolicy.SeverityHigh || r.Source != "tollgate" || len(r.Subjects) != 1 || r.Subjects[0].UID == "" {
			t.Errorf("result %+v: want severity high, source tollgate and the object's reference with its UID", r)
		}
	}
	for _, ns := range []string{s.exempt, s.excluded} {
		if r := getReport(t, ns); r != nil {
			t.Errorf("namespace %s is not audited, but has a PolicyReport: %v", ns, results(r))
		}
	}

	// The team fixes the Deployment and removes the Secret.
	var d appsv1.Deployment
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: s.inside, Name: "web"}, &d); err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Image = "nginx:1.27.3"
	if err := env.Client.Update(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.inside, Name: "plain"}}); err != nil {
		t.Fatal(err)
	}
	// The ConfigMap goes: nothing judged is left in s.outside.
	if err := env.Client.Delete(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.outside, Name: "settings"}}); err != nil {
		t.Fatal(err)
	}
	res, err = a.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 {
		t.Errorf("failures: %v", res.Failures)
	}
	if r := getReport(t, s.outside); r != nil {
		t.Errorf("namespace %s holds nothing judged any more, but its PolicyReport is still there: %v", s.outside, results(r))
	}
	second := report(t, s.inside)
	if got := results(second); len(got) != 0 {
		t.Errorf("after the fix, PolicyReport %s still lists %v", s.inside, got)
	}
	if second.UID != first.UID || second.ResourceVersion == first.ResourceVersion {
		t.Errorf("the PolicyReport was not updated in place: uid %s -> %s, resourceVersion %s -> %s", first.UID, second.UID, first.ResourceVersion, second.ResourceVersion)
	}
	if second.Summary.Fail != 0 || second.Summary.Pass != 2 {
		t.Errorf("after the fix, summary %+v, want 0 fail and 2 pass", second.Summary)
	}
}

// TestAuditCLI: `tollgate audit` reports as `tollgate test` does, and
// exits 1 when something is denied.
func TestAuditCLI(t *testing.T) {
	s := newScene(t)
	kubeconfig, cfgFile := s.writeFiles(t, t.TempDir())
	cmd := exec.Command(bin, "audit", "--kubeconfig", kubeconfig, "--config", cfgFile,
		"--webhook-config-name", s.webhookConfig, "--audit-chunk-size", "7", "-o", "json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("tollgate audit: %v, want exit status 1\n%s", err, stderr.String())
	}
	var rep struct {
		Results []struct {
			File, Kind, Name, Namespace string
			Violations                  []struct{ Rule, Severity string }
			Error                       string
		}
		Summary struct{ Documents, Denied int }
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("decode the JSON report: %v\n%s", err, out)
	}
	var got []string
	for _, r := range rep.Results {
		if r.Error != "" {
			t.Errorf("error result %s: %s", r.File, r.Error)
		}
		if !slices.Contains([]string{s.inside, s.outside, s.exempt, s.excluded}, r.Namespace) {
			continue
		}
		for _, v := range r.Violations {
			got = append(got, fmt.Sprintf("%s %s %s", v.Severity, v.Rule, r.File))
		}
	}
	slices.Sort(got)
	want := []string{
		"deny no-latest-tag apis/apps/v1/namespaces/" + s.inside + "/deployments/web",
		"deny no-plaintext-secret api/v1/namespaces/" + s.inside + "/secrets/plain",
		"deny project-destination-denied api/v1/namespaces/" + s.outside + "/configmaps/settings",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if rep.Summary.Documents < 5 || rep.Summary.Denied < 3 {
		t.Errorf("summary %+v, want at least 5 objects judged and 3 denied", rep.Summary)
	}
	if r := getReport(t, s.inside); r != nil {
		t.Errorf("without --write-reports, a PolicyReport was written: %v", results(r))
	}
}

// newAuditor returns an Auditor over the test API server with the built-in
// rules and the scene's webhook configuration, writing reports.
func newAuditor(t *testing.T, s scene) *audit.Auditor {
	t.Helper()
	eval, err := policies.New(t.Context(), policies.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	// The handler reads typed Applications and AppProjects, as from the
	// webhook's cache.
	reader, err := client.New(env.Config, client.Options{Scheme: testutil.Scheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := webhook.NewHandler(webhook.Options{Config: s.config(), Evaluator: eval, Reader: reader, Namespace: "tollgate-system"})
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	a, err := audit.New(audit.Options{
		Client: env.Client, Discovery: dc, Reviewer: h, WebhookConfigName: s.webhookConfig,
		ChunkSize: 5, WriteReports: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// report returns the audit's PolicyReport of ns; the test fails without
// one.
func report(t *testing.T, ns string) *wgpolicy.PolicyReport {
	t.Helper()
	r := getReport(t, ns)
	if r == nil {
		t.Fatalf("no PolicyReport %s/%s", ns, audit.ReportName)
	}
	return r
}

// getReport returns the audit's PolicyReport of ns, nil when there is none.
func getReport(t *testing.T, ns string) *wgpolicy.PolicyReport {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(wgpolicy.GroupVersion.WithKind("PolicyReport"))
	err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: audit.ReportName}, u)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var r wgpolicy.PolicyReport
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// results lists a report's results as "result rule Kind/name".
func results(r *wgpolicy.PolicyReport) []string {
	var out []string
	for _, res := range r.Results {
		for _, s := range res.Subjects {
			out = append(out, fmt.Sprintf("%s %s %s/%s", res.Result, res.Policy, s.Kind, s.Name))
		}
	}
	slices.Sort(out)
	return out
}

// argo returns an Argo CD object of kind in the Argo CD namespace.
func argo(kind, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(kind))
	u.SetNamespace(argoNS)
	u.SetName(name)
	return u
}
