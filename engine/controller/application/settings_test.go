package application

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/engine/apply"
)

func TestParseSettings(t *testing.T) {
	got, err := ParseSettings(map[string]string{
		"resource.customizations.ignoreDifferences.apps_Deployment": "jsonPointers: [/spec/replicas]\n",
		"resource.customizations.ignoreDifferences.all":             "managedFieldsManagers: [kube-controller-manager]\n",
		"resource.customizations.ignoreDifferences.Secret":          "jqPathExpressions: [.data.token]\n",
		"resource.customizations": `admissionregistration.k8s.io/MutatingWebhookConfiguration:
  ignoreDifferences: |
    jsonPointers: [/webhooks/0/clientConfig/caBundle]
  health.lua: "return {status = 'Healthy'}"
`,
		"resource.exclusions":     "- apiGroups: [cilium.io]\n  kinds: ['*']\n  clusters: ['https://*.internal']\n",
		"resource.inclusions":     "- apiGroups: ['*']\n  kinds: ['*']\n",
		"resource.compareoptions": "ignoreAggregatedRoles: true\nignoreResourceStatusField: all\n",
		"kustomize.buildOptions":  " --load-restrictor LoadRestrictionsNone --reorder none\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{
		HealthChecks: map[string]string{"admissionregistration.k8s.io/MutatingWebhookConfiguration": "return {status = 'Healthy'}"},
		IgnoreDifferences: []apply.IgnoreDifference{
			{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration", JSONPointers: []string{"/webhooks/0/clientConfig/caBundle"}},
			{Group: "", Kind: "Secret", JQPathExpressions: []string{".data.token"}},
			{Group: "*", Kind: "*", ManagedFieldsManagers: []string{"kube-controller-manager"}},
			{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}},
			{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", JQPathExpressions: []string{"select(.aggregationRule != null) | .rules"}},
		},
		Exclusions:            []ResourceFilter{{APIGroups: []string{"cilium.io"}, Kinds: []string{"*"}, Clusters: []string{"https://*.internal"}}},
		Inclusions:            []ResourceFilter{{APIGroups: []string{"*"}, Kinds: []string{"*"}}},
		IgnoreAggregatedRoles: true,
		KustomizeBuildOptions: "--load-restrictor LoadRestrictionsNone --reorder none",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		group, kind, server string
		want                bool
	}{
		{"cilium.io", "CiliumIdentity", "https://k8s.internal", false},
		{"cilium.io", "CiliumIdentity", "https://kubernetes.default.svc", true},
		{"apps", "Deployment", "https://k8s.internal", true},
	} {
		if m := got.Managed(tc.group, tc.kind, tc.server); m != tc.want {
			t.Errorf("Managed(%s, %s, %s) = %v, want %v", tc.group, tc.kind, tc.server, m, tc.want)
		}
	}
	only := Settings{Inclusions: []ResourceFilter{{APIGroups: []string{"", "apps"}}}}
	if !only.Managed("", "ConfigMap", "x") || only.Managed("batch", "Job", "x") {
		t.Error("inclusions: want the core and apps groups only")
	}
}

func TestParseSettingsErrors(t *testing.T) {
	for key, value := range map[string]string{
		"resource.customizations.ignoreDifferences.apps_Deployment": "jsonPointer: [/spec/replicas]\n",
		"resource.exclusions":     "- apiGroup: [x]\n",
		"resource.compareoptions": "ignoreResourceStatusField: none\n",
		"resource.customizations": "[1, 2",
	} {
		_, err := ParseSettings(map[string]string{key: value})
		if err == nil || !strings.Contains(err.Error(), "argocd-cm "+key) {
			t.Errorf("%s: error = %v, want one naming the key", key, err)
		}
	}
}

// TestParseSettingsHealthChecks reads argocd-cm's Lua health checks: the
// per-kind keys (core kinds with or without the leading "_") and the
// health.lua of resource.customizations entries, which those keys
// override.
func TestParseSettingsHealthChecks(t *testing.T) {
	got, err := ParseSettings(map[string]string{
		"resource.customizations.health.cert-manager.io_Certificate": "a",
		"resource.customizations.health.Pod":                         "b",
		"resource.customizations.health._Service":                    "c",
		"resource.customizations": `example.com/Widget:
  health.lua: d
"*.crossplane.io/*":
  health.lua: e
cert-manager.io/Certificate:
  health.lua: overridden
other/Thing:
  ignoreDifferences: "jsonPointers: [/x]"
`,
		"resource.exclusions": "- kinds: [Event]\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"cert-manager.io/Certificate": "a", "Pod": "b", "Service": "c",
		"example.com/Widget": "d", "*.crossplane.io/*": "e",
	}
	if diff := cmp.Diff(want, got.HealthChecks); diff != "" {
		t.Errorf("health checks (-want +got):\n%s", diff)
	}
}

// TestParseSettingsSyncImpersonation: application.sync.impersonation.enabled
// turns sync impersonation on with "true" only, as Argo CD compares it.
func TestParseSettingsSyncImpersonation(t *testing.T) {
	for name, tc := range map[string]struct {
		data map[string]string
		want bool
	}{
		"absent":       {data: nil, want: false},
		"true":         {data: map[string]string{"application.sync.impersonation.enabled": "true"}, want: true},
		"false":        {data: map[string]string{"application.sync.impersonation.enabled": "false"}, want: false},
		"empty":        {data: map[string]string{"application.sync.impersonation.enabled": ""}, want: false},
		"not lower":    {data: map[string]string{"application.sync.impersonation.enabled": "True"}, want: false},
		"with a space": {data: map[string]string{"application.sync.impersonation.enabled": "true "}, want: false},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseSettings(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.SyncImpersonation); diff != "" {
				t.Errorf("SyncImpersonation (-want +got):\n%s", diff)
			}
		})
	}
}
