// Package config_test checks tollgate's install manifests (config/) against a
// real API server: `kustomize build config/default` is applied with a
// server-side dry run, and Argo CD objects round-trip through the generated
// CRDs without losing fields.
package config_test

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, "build scheme:", err)
			os.Exit(1)
		}
	}
	opts := envtest.Options{CRDDirectoryPaths: []string{"config/crd/bases"}, Scheme: scheme}
	os.Exit(envtest.Run(m, opts, func(e *envtest.Env) error {
		env = e
		return nil
	}))
}

// build runs `kustomize build` on a directory of config/ in process, with
// kustomize's defaults (plugins off, loads confined to the directory).
func build(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(env.Root, "config", dir))
	if err != nil {
		t.Fatalf("kustomize build config/%s: %v", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range rm.Resources() {
		// Through JSON, so numbers are int64 or float64 as client-go expects.
		data, err := r.MarshalJSON()
		if err != nil {
			t.Fatalf("config/%s: %s: %v", dir, r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			t.Fatalf("config/%s: %s: %v", dir, r.CurId(), err)
		}
		objs = append(objs, u)
	}
	return objs
}

func ref(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", u.GetKind(), ns, u.GetName())
	}
	return fmt.Sprintf("%s %s", u.GetKind(), u.GetName())
}

// applyOrder puts Namespaces first and CRDs second, as kubectl needs them
// before the objects that live in or use them; the rest keep their order.
func applyOrder(objs []*unstructured.Unstructured) {
	rank := func(u *unstructured.Unstructured) int {
		switch u.GetKind() {
		case "Namespace":
			return 0
		case "CustomResourceDefinition":
			return 1
		}
		return 2
	}
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int { return cmp.Compare(rank(a), rank(b)) })
}

// TestDefaultServerDryRun is `kubectl apply --server-side --dry-run=server -k
// config/default` against a real API server: every object must pass the API
// server's validation and admission. Namespaces and CRDs are applied for real
// first, because a dry-run namespace does not exist for the objects in it.
func TestDefaultServerDryRun(t *testing.T) { serverDryRun(t, "default") }

// TestUIServerDryRun is the same for the optional config/ui, whose
// namespaces config/default and Argo CD create.
func TestUIServerDryRun(t *testing.T) {
	for _, ns := range []string{"tollgate-system", "argocd"} {
		if err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	serverDryRun(t, "ui")
}

func serverDryRun(t *testing.T, dir string) {
	t.Helper()
	objs := build(t, dir)
	applyOrder(objs)
	for _, u := range objs {
		opts := []client.ApplyOption{client.ForceOwnership, client.FieldOwner("tollgate")}
		switch u.GetKind() {
		case "Namespace", "CustomResourceDefinition":
		default:
			opts = append(opts, client.DryRunAll)
		}
		if err := env.Client.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(u.DeepCopy()), opts...); err != nil {
			t.Errorf("apply %s: %v", ref(u), err)
		}
	}
}

// TestDefaultContents pins what config/default installs and the settings the
// rest of tollgate relies on (names, namespace, ports, failure policies).
func TestDefaultContents(t *testing.T) {
	objs := build(t, "default")

	t.Run("objects", func(t *testing.T) {
		var got []string
		for _, u := range objs {
			got = append(got, ref(u))
		}
		slices.Sort(got)
		want := []string{
			"ClusterRole tollgate-audit",
			"ClusterRole tollgate-controller",
			"ClusterRole tollgate-webhook",
			"ClusterRoleBinding tollgate-audit",
			"ClusterRoleBinding tollgate-controller",
			"ClusterRoleBinding tollgate-webhook",
			"CustomResourceDefinition applications.argoproj.io",
			"CustomResourceDefinition applicationsets.argoproj.io",
			"CustomResourceDefinition appprojects.argoproj.io",
			"Deployment tollgate-system/tollgate-controller",
			"Deployment tollgate-system/tollgate-repo-server",
			"Deployment tollgate-system/tollgate-webhook",
			"Namespace tollgate-system",
			"NetworkPolicy tollgate-system/tollgate-repo-server",
			"PodDisruptionBudget tollgate-system/tollgate-controller",
			"PodDisruptionBudget tollgate-system/tollgate-repo-server",
			"PodDisruptionBudget tollgate-system/tollgate-webhook",
			"Role tollgate-system/tollgate-controller",
			"Role tollgate-system/tollgate-webhook",
			"RoleBinding tollgate-system/tollgate-controller",
			"RoleBinding tollgate-system/tollgate-webhook",
			"Service tollgate-system/tollgate-repo-server",
			"Service tollgate-system/tollgate-webhook",
			"ServiceAccount tollgate-system/tollgate-controller",
			"ServiceAccount tollgate-system/tollgate-repo-server",
			"ServiceAccount tollgate-system/tollgate-webhook",
			"ValidatingWebhookConfiguration tollgate",
		}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("objects (-want +got):\n%s", diff)
		}
	})

	t.Run("crd labels", func(t *testing.T) {
		for _, u := range objs {
			if u.GetKind() != "CustomResourceDefinition" {
				continue
			}
			want := map[string]string{"app.kubernetes.io/name": u.GetName(), "app.kubernetes.io/part-of": "argocd"}
			if diff := gocmp.Diff(want, u.GetLabels()); diff != "" {
				t.Errorf("%s labels (-want +got):\n%s", ref(u), diff)
			}
		}
	})

	t.Run("webhooks", func(t *testing.T) {
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		convert(t, find(t, objs, "ValidatingWebhookConfiguration", "tollgate"), &vwc)
		type hook struct {
			Name, FailurePolicy, SideEffects, Service, Path string
			Port, Timeout                                   int32
			// Rules read "groups versions resources operations scope".
			Rules, Excluded, MatchConditions []string
			CABundle                         int
		}
		join := func(list []string) string { return strings.Join(list, ",") }
		var got []hook
		for _, w := range vwc.Webhooks {
			h := hook{
				Name:          w.Name,
				FailurePolicy: string(*w.FailurePolicy),
				SideEffects:   string(*w.SideEffects),
				Service:       w.ClientConfig.Service.Namespace + "/" + w.ClientConfig.Service.Name,
				Path:          *w.ClientConfig.Service.Path,
				Port:          *w.ClientConfig.Service.Port,
				Timeout:       *w.TimeoutSeconds,
				CABundle:      len(w.ClientConfig.CABundle),
			}
			for _, r := range w.Rules {
				var ops []string
				for _, op := range r.Operations {
					ops = append(ops, string(op))
				}
				h.Rules = append(h.Rules, fmt.Sprintf("%s %s %s %s %s",
					join(r.APIGroups), join(r.APIVersions), join(r.Resources), join(ops), *r.Scope))
			}
			for _, e := range w.NamespaceSelector.MatchExpressions {
				h.Excluded = append(h.Excluded, e.Key+" "+string(e.Operator)+" "+fmt.Sprint(e.Values))
			}
			for _, c := range w.MatchConditions {
				h.MatchConditions = append(h.MatchConditions, c.Name)
			}
			got = append(got, h)
		}
		excluded := []string{"kubernetes.io/metadata.name NotIn [kube-system kube-public kube-node-lease tollgate-system]"}
		want := []hook{
			{
				Name: "argoproj.tollgate.dev", FailurePolicy: "Fail", SideEffects: "None",
				Service: "tollgate-system/tollgate-webhook", Path: "/validate", Port: 443, Timeout: 5,
				Rules: []string{
					"argoproj.io v1alpha1 applications CREATE,UPDATE Namespaced",
					"argoproj.io v1alpha1 appprojects CREATE,UPDATE,DELETE Namespaced",
				},
				Excluded: excluded,
			},
			{
				// The kinds a rule judges whoever owns them
				// (webhook/kinds.go), and kubectl debug.
				Name: "resources.tollgate.dev", FailurePolicy: "Ignore", SideEffects: "None",
				Service: "tollgate-system/tollgate-webhook", Path: "/validate", Port: 443, Timeout: 5,
				Rules: []string{
					" * pods,pods/ephemeralcontainers,podtemplates,replicationcontrollers,secrets CREATE,UPDATE Namespaced",
					"apps * deployments,statefulsets,daemonsets,replicasets CREATE,UPDATE Namespaced",
					"batch * jobs,cronjobs CREATE,UPDATE Namespaced",
					"bitnami.com * sealedsecrets CREATE,UPDATE Namespaced",
					"external-secrets.io * externalsecrets CREATE,UPDATE Namespaced",
				},
				Excluded: excluded,
			},
			{
				// Everything else Argo CD tracks; test/webhook checks what
				// the conditions let through.
				Name: "tracked.tollgate.dev", FailurePolicy: "Ignore", SideEffects: "None",
				Service: "tollgate-system/tollgate-webhook", Path: "/validate", Port: 443, Timeout: 5,
				Rules:           []string{"* * * CREATE,UPDATE *"},
				Excluded:        excluded,
				MatchConditions: []string{"tracked-by-argocd-judged-only-here"},
			},
		}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("webhooks (-want +got):\n%s", diff)
		}
	})

	t.Run("service reaches webhook port", func(t *testing.T) {
		var svc corev1.Service
		convert(t, find(t, objs, "Service", "tollgate-webhook"), &svc)
		var dep appsv1.Deployment
		convert(t, find(t, objs, "Deployment", "tollgate-webhook"), &dep)
		if len(svc.Spec.Selector) == 0 {
			t.Fatal("service has no selector")
		}
		for k, v := range svc.Spec.Selector {
			if got := dep.Spec.Template.Labels[k]; got != v {
				t.Errorf("service selects %s=%s, pod label is %q", k, v, got)
			}
		}
		port := svc.Spec.Ports[0]
		var target int32
		for _, p := range dep.Spec.Template.Spec.Containers[0].Ports {
			if p.Name == port.TargetPort.String() {
				target = p.ContainerPort
			}
		}
		if port.Port != 443 || target != 9443 {
			t.Errorf("service port %d -> container port %d, want 443 -> 9443", port.Port, target)
		}
	})

	t.Run("deployments", func(t *testing.T) {
		type container struct {
			Replicas                  int32
			ServiceAccount, Image     string
			Args                      []string
			Readiness, Liveness       string
			NonRoot, ReadOnlyRoot     bool
			DropCaps                  []corev1.Capability
			Seccomp                   corev1.SeccompProfileType
			NamespaceEnv, MemLimitEnv bool
			NameEnv, HasLimits        bool
		}
		summarize := func(name string) container {
			var dep appsv1.Deployment
			convert(t, find(t, objs, "Deployment", name), &dep)
			pod := dep.Spec.Template.Spec
			c := pod.Containers[0]
			probe := func(p *corev1.Probe) string {
				return p.HTTPGet.Path + " " + p.HTTPGet.Port.String()
			}
			return container{
				Replicas:       *dep.Spec.Replicas,
				ServiceAccount: pod.ServiceAccountName,
				Image:          c.Image,
				Args:           c.Args,
				Readiness:      probe(c.ReadinessProbe),
				Liveness:       probe(c.LivenessProbe),
				NonRoot:        *pod.SecurityContext.RunAsNonRoot && *c.SecurityContext.RunAsNonRoot,
				ReadOnlyRoot:   *c.SecurityContext.ReadOnlyRootFilesystem,
				DropCaps:       c.SecurityContext.Capabilities.Drop,
				Seccomp:        pod.SecurityContext.SeccompProfile.Type,
				NamespaceEnv:   fieldEnv(c, "POD_NAMESPACE") == "metadata.namespace",
				NameEnv:        fieldEnv(c, "POD_NAME") == "metadata.name",
				MemLimitEnv: slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
					return e.Name == "GOMEMLIMIT" && e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil &&
						e.ValueFrom.ResourceFieldRef.Resource == "limits.memory" && e.ValueFrom.ResourceFieldRef.ContainerName == c.Name
				}),
				HasLimits: !c.Resources.Limits.Memory().IsZero() && !c.Resources.Requests.Cpu().IsZero(),
			}
		}
		common := container{
			Image: "ghcr.io/tollgate-dev/tollgate:v0.1.0", Readiness: "/readyz health", Liveness: "/healthz health",
			NonRoot: true, ReadOnlyRoot: true, DropCaps: []corev1.Capability{"ALL"}, Seccomp: corev1.SeccompProfileTypeRuntimeDefault,
			NamespaceEnv: true, MemLimitEnv: true, HasLimits: true,
		}
		wantWebhook, wantController := common, common
		wantWebhook.Replicas, wantWebhook.ServiceAccount = 2, "tollgate-webhook"
		wantWebhook.Args = []string{"webhook", "--port", "9443", "--metrics-addr", ":8080"}
		wantController.Replicas, wantController.ServiceAccount, wantController.NameEnv = 2, "tollgate-controller", true
		wantController.Args = []string{"controller", "--namespace", "argocd", "--metrics-addr", ":8080", "--repo-server", "tollgate-repo-server:8443", "--sharding", "dynamic"}
		if diff := gocmp.Diff(wantWebhook, summarize("tollgate-webhook")); diff != "" {
			t.Errorf("tollgate-webhook (-want +got):\n%s", diff)
		}
		if diff := gocmp.Diff(wantController, summarize("tollgate-controller")); diff != "" {
			t.Errorf("tollgate-controller (-want +got):\n%s", diff)
		}
	})
}

// TestRepoServerIsolation pins what keeps the repo-server, which parses
// tenant input, apart: no Kubernetes token, no role, ingress from the
// controller only, and a certificate from the Secret the controller keeps
// for the name it calls.
func TestRepoServerIsolation(t *testing.T) {
	objs := build(t, "default")
	var dep appsv1.Deployment
	convert(t, find(t, objs, "Deployment", "tollgate-repo-server"), &dep)
	var sa corev1.ServiceAccount
	convert(t, find(t, objs, "ServiceAccount", "tollgate-repo-server"), &sa)
	pod := dep.Spec.Template.Spec
	c := pod.Containers[0]

	if *dep.Spec.Replicas != 2 {
		t.Errorf("replicas = %d, want 2", *dep.Spec.Replicas)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken || sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Error("the repo-server's pod or service account mounts a token")
	}
	for _, u := range objs {
		if !strings.HasSuffix(u.GetKind(), "RoleBinding") {
			continue
		}
		var b rbacv1.RoleBinding // same subjects field for ClusterRoleBinding
		convert(t, u, &b)
		for _, s := range b.Subjects {
			if s.Name == "tollgate-repo-server" {
				t.Errorf("%s grants the repo-server a role", ref(u))
			}
		}
	}
	if len(c.Env) != 0 || len(c.EnvFrom) != 0 || pod.EnableServiceLinks == nil || *pod.EnableServiceLinks {
		t.Error("the repo-server gets environment variables; it needs none")
	}
	if !*c.SecurityContext.ReadOnlyRootFilesystem || !*pod.SecurityContext.RunAsNonRoot || *c.SecurityContext.AllowPrivilegeEscalation {
		t.Error("the repo-server container is not locked down")
	}
	wantArgs := []string{"repo-server", "--addr", ":8443", "--cert-dir", "/etc/tollgate/tls", "--client-ca", "/etc/tollgate/tls/ca.crt", "--repo-cache", "/tmp/repo-cache",
		"--parallelism", "2", "--render-timeout", "90s", "--render-memory", "1Gi"}
	if diff := gocmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	var secret string
	var keys []string
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			secret = v.Secret.SecretName
			for _, it := range v.Secret.Items {
				keys = append(keys, it.Key)
			}
		}
	}
	if secret != "tollgate-repo-server-tls" {
		t.Errorf("certificate volume from Secret %q, want the controller's default tollgate-repo-server-tls", secret)
	}
	// The CA's key stays with the controller: whoever holds it can issue
	// client certificates the repo-server accepts.
	if diff := gocmp.Diff([]string{"tls.crt", "tls.key", "ca.crt"}, keys); diff != "" {
		t.Errorf("keys mounted from the Secret (-want +got):\n%s", diff)
	}

	var svc corev1.Service
	convert(t, find(t, objs, "Service", "tollgate-repo-server"), &svc)
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.Ports[0].Port != 8443 {
		t.Errorf("service: clusterIP %q port %d, want headless on 8443 (the controller's --repo-server tollgate-repo-server:8443)", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
	}
	for k, v := range svc.Spec.Selector {
		if got := dep.Spec.Template.Labels[k]; got != v {
			t.Errorf("service selects %s=%s, pod label is %q", k, v, got)
		}
	}

	var np networkingv1.NetworkPolicy
	convert(t, find(t, objs, "NetworkPolicy", "tollgate-repo-server"), &np)
	var ctrlDep appsv1.Deployment
	convert(t, find(t, objs, "Deployment", "tollgate-controller"), &ctrlDep)
	selects := func(sel metav1.LabelSelector, lbls map[string]string) bool {
		s, err := metav1.LabelSelectorAsSelector(&sel)
		return err == nil && s.Matches(labels.Set(lbls))
	}
	if !selects(np.Spec.PodSelector, dep.Spec.Template.Labels) {
		t.Error("the network policy does not select the repo-server pods")
	}
	if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 2 {
		t.Fatalf("ingress rules = %+v, want one rule from the controller and the web UI", np.Spec.Ingress)
	}
	var webhook, uiDep appsv1.Deployment
	convert(t, find(t, objs, "Deployment", "tollgate-webhook"), &webhook)
	convert(t, find(t, build(t, "ui"), "Deployment", "tollgate-ui"), &uiDep)
	allowed := func(lbls map[string]string) bool {
		for _, from := range np.Spec.Ingress[0].From {
			if from.PodSelector != nil && selects(*from.PodSelector, lbls) {
				return true
			}
		}
		return false
	}
	for _, from := range np.Spec.Ingress[0].From {
		if from.PodSelector == nil || from.NamespaceSelector != nil || from.IPBlock != nil {
			t.Errorf("ingress from %+v, want pods of this namespace only", from)
		}
	}
	for name, want := range map[string]struct {
		labels  map[string]string
		allowed bool
	}{
		"the controller": {ctrlDep.Spec.Template.Labels, true},
		"the web UI":     {uiDep.Spec.Template.Labels, true},
		"the webhook":    {webhook.Spec.Template.Labels, false},
		"a repo-server":  {dep.Spec.Template.Labels, false},
	} {
		if allowed(want.labels) != want.allowed {
			t.Errorf("%s may call the repo-server: %v, want %v", name, !want.allowed, want.allowed)
		}
	}
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() == kind && u.GetName() == name {
			return u
		}
	}
	t.Fatalf("no %s %s in the build", kind, name)
	return nil
}

func convert(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true); err != nil {
		t.Fatalf("convert %s: %v", ref(u), err)
	}
}

// fieldEnv returns the field path of c's environment variable name, ""
// when it is not set from a field.
func fieldEnv(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			return e.ValueFrom.FieldRef.FieldPath
		}
	}
	return ""
}
