package envtest_test

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/tollgate-dev/tollgate/test/envtest"
)

var (
	env   *envtest.Env
	calls atomic.Int64
)

// denyForbidden denies ConfigMaps that carry data key "forbidden".
type denyForbidden struct{}

func (denyForbidden) Handle(_ context.Context, req admission.Request) admission.Response {
	calls.Add(1)
	if strings.Contains(string(req.Object.Raw), `"forbidden"`) {
		return admission.Denied("key forbidden is not allowed")
	}
	return admission.Allowed("")
}

func TestMain(m *testing.M) {
	opts := envtest.Options{
		CRDDirectoryPaths: []string{},
		Webhooks: crenvtest.WebhookInstallOptions{
			ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{{
				ObjectMeta: metav1.ObjectMeta{Name: "harness-test"},
				Webhooks: []admissionregistrationv1.ValidatingWebhook{{
					Name:                    "configmaps.harness.tollgate.dev",
					AdmissionReviewVersions: []string{"v1"},
					SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
					FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
					ClientConfig: admissionregistrationv1.WebhookClientConfig{
						Service: &admissionregistrationv1.ServiceReference{Name: "x", Namespace: "x", Path: ptr.To("validate")},
					},
					Rules: []admissionregistrationv1.RuleWithOperations{{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"},
						},
					}},
					ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"harness": "yes"}},
				}},
			}},
		},
	}
	os.Exit(envtest.Run(m, opts, func(e *envtest.Env) error {
		env = e
		wo := &e.WebhookInstallOptions
		srv := webhook.NewServer(webhook.Options{Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir})
		srv.Register("/validate", &webhook.Admission{Handler: denyForbidden{}})
		go func() { _ = srv.Start(context.Background()) }()
		return nil
	}))
}

func TestControlPlaneServesObjects(t *testing.T) {
	ns := env.Namespace(t)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns},
		Data:       map[string]string{"k": "v"},
	}
	if err := env.Client.Create(t.Context(), cm); err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	var got corev1.ConfigMap
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(cm), &got); err != nil {
		t.Fatalf("get configmap: %v", err)
	}
	if got.Data["k"] != "v" {
		t.Errorf("data = %v, want k=v", got.Data)
	}
	if got.UID == "" || got.ResourceVersion == "" {
		t.Errorf("object was not stored by the API server: %+v", got.ObjectMeta)
	}
}

func TestAPIServerCallsWebhook(t *testing.T) {
	ns := env.Namespace(t)
	before := calls.Load()
	allowed := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "allowed", Namespace: ns, Labels: map[string]string{"harness": "yes"}},
		Data:       map[string]string{"fine": "1"},
	}
	if err := env.Client.Create(t.Context(), allowed); err != nil {
		t.Fatalf("create allowed configmap: %v", err)
	}
	denied := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "denied", Namespace: ns, Labels: map[string]string{"harness": "yes"}},
		Data:       map[string]string{"forbidden": "1"},
	}
	err := env.Client.Create(t.Context(), denied)
	if err == nil || !strings.Contains(err.Error(), "key forbidden is not allowed") {
		t.Fatalf("create denied configmap: err = %v, want a denial from the webhook", err)
	}
	if n := calls.Load() - before; n != 2 {
		t.Errorf("webhook called %d times, want 2", n)
	}
}
