package controlplane

import (
	"fmt"
	"os"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// ReadWebhookConfiguration reads a ValidatingWebhookConfiguration whose
// webhooks call a Service (config/webhook's) and readies it for
// Options.Webhooks: envtest points each webhook at
// https://<host:port>/<path>, so the leading "/" of each path is dropped.
func ReadWebhookConfiguration(path string) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read webhook configuration: %w", err)
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := yaml.UnmarshalStrict(data, vwc); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	if len(vwc.Webhooks) == 0 {
		return nil, fmt.Errorf("%s has no webhooks", path)
	}
	for i := range vwc.Webhooks {
		svc := vwc.Webhooks[i].ClientConfig.Service
		if svc == nil || svc.Path == nil {
			return nil, fmt.Errorf("%s: webhook %s has no service path", path, vwc.Webhooks[i].Name)
		}
		svc.Path = ptr.To(strings.TrimPrefix(*svc.Path, "/"))
	}
	return vwc, nil
}
