package certs

import (
	"bytes"
	"context"
	"fmt"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// injectCABundle sets the caBundle of every webhook of the
// ValidatingWebhookConfiguration to the Secret's ca.crt, retrying on
// conflicts.
//
// The webhook configuration is read before the Secret and written with the
// resourceVersion read. Replicas write the Secret before the configuration,
// so a replica holding an older bundle cannot overwrite a newer one: either
// it reads the newer Secret, or its write conflicts and is retried.
func (m *Manager) injectCABundle(ctx context.Context) error {
	name := m.opts.WebhookConfigName
	if name == "" {
		return nil
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := m.c.Get(ctx, client.ObjectKey{Name: name}, vwc); err != nil {
			return err
		}
		sec := &corev1.Secret{}
		if err := m.c.Get(ctx, m.secretKey(), sec); err != nil {
			return fmt.Errorf("get secret %s: %w", m.secretKey(), err)
		}
		bundle := sec.Data[SecretKeyCACert]
		if _, err := parseCertificates(bundle); err != nil {
			return fmt.Errorf("read %s of secret %s: %w", SecretKeyCACert, m.secretKey(), err)
		}
		changed := 0
		for i := range vwc.Webhooks {
			if !bytes.Equal(vwc.Webhooks[i].ClientConfig.CABundle, bundle) {
				vwc.Webhooks[i].ClientConfig.CABundle = bundle
				changed++
			}
		}
		if changed == 0 {
			return nil
		}
		if err := m.c.Update(ctx, vwc); err != nil {
			return err
		}
		logr.FromContextOrDiscard(ctx).Info("Injected CA bundle", "validatingWebhookConfiguration", name, "webhooks", changed)
		return nil
	})
	if err != nil {
		return fmt.Errorf("inject CA bundle into validatingwebhookconfiguration %s: %w", name, err)
	}
	return nil
}
