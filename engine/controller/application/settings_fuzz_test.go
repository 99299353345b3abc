package application

import (
	"testing"
)

// FuzzParseArgoCDConfigMap feeds argocd-cm values to ParseSettings: an
// error is fine, a panic is not.
func FuzzParseArgoCDConfigMap(f *testing.F) {
	f.Add("admissionregistration.k8s.io/MutatingWebhookConfiguration:\n  ignoreDifferences: |\n    jsonPointers: [/webhooks/0/clientConfig/caBundle]\n  health.lua: return {status = 'Healthy'}\n",
		"- apiGroups: ['*']\n  kinds: [Event]\n", "jsonPointers: [/spec/replicas]\n", "ignoreAggregatedRoles: true\n")
	f.Add("[", "{", "jqPathExpressions: [.a[", "ignoreResourceStatusField: crd\n")
	f.Fuzz(func(t *testing.T, customizations, exclusions, ignore, compare string) {
		data := map[string]string{
			"resource.customizations": customizations,
			"resource.exclusions":     exclusions,
			"resource.inclusions":     exclusions,
			"resource.customizations.ignoreDifferences.apps_Deployment": ignore,
			"resource.customizations.health.example.com_Widget":         ignore,
			"resource.compareoptions":                                   compare,
		}
		if s, err := ParseSettings(data); err == nil {
			s.Managed("apps", "Deployment", "https://kubernetes.default.svc")
		}
	})
}
