package engine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/discovery"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestKustomizeOptionsAndBuildVariables syncs an overlay through every
// Kustomize option Argo CD adds to kustomize edit's, with its build
// variables, and checks the objects in the cluster.
func TestKustomizeOptionsAndBuildVariables(t *testing.T) {
	files := map[string]string{
		"manifests/kustomization.yaml":        "resources: [deployment.yaml, service.yaml]\ncommonLabels: {tier: web}\n",
		"manifests/deployment.yaml":           deployment("web", "registry.example.com/web:1.0.0", 2),
		"manifests/service.yaml":              service("web"),
		"components/probe/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonAnnotations: {probe: \"on\"}\n",
	}
	f := newFixture(t, files)
	f.application(&v1alpha1.SyncPolicyAutomated{}, func(a *v1alpha1.Application) {
		a.Spec.Source.Kustomize = &v1alpha1.ApplicationSourceKustomize{
			Images:            []string{"registry.example.com/web=registry.example.com/web:${ARGOCD_APP_REVISION_SHORT}"},
			Replicas:          []v1alpha1.KustomizeReplica{{Name: "web", Count: intstr.FromString("3")}},
			CommonLabels:      map[string]string{"tier": "frontend", "app.example.com/name": "$ARGOCD_APP_NAME"},
			ForceCommonLabels: true,
			Components:        []string{"../components/probe"},
			Patches: []v1alpha1.KustomizePatch{{
				Target: &v1alpha1.KustomizeSelector{Kind: "Service", Name: "web"},
				Patch:  "- {op: replace, path: /spec/ports/0/port, value: 8080}",
			}},
		}
	})
	f.waitSynced(f.head)
	var dep appsv1.Deployment
	if err := f.get(&dep, "web"); err != nil {
		t.Fatal(err)
	}
	if got, want := dep.Spec.Template.Spec.Containers[0].Image, "registry.example.com/web:"+f.head[:7]; got != want {
		t.Errorf("image = %q, want %q", got, want)
	}
	if got := *dep.Spec.Replicas; got != 3 {
		t.Errorf("replicas = %d, want 3", got)
	}
	if got := dep.Labels; got["tier"] != "frontend" || got["app.example.com/name"] != f.name {
		t.Errorf("labels = %v, want tier=frontend and app.example.com/name=%s", got, f.name)
	}
	if got := dep.Annotations["probe"]; got != "on" {
		t.Errorf("annotation probe = %q, want on (from the component)", got)
	}
	var svc corev1.Service
	if err := f.get(&svc, "web"); err != nil {
		t.Fatal(err)
	}
	if got := svc.Spec.Ports[0].Port; got != 8080 {
		t.Errorf("service port = %d, want 8080 (from the patch)", got)
	}
}

// TestOverrideFilesWriteBack syncs a source with Argo CD's override files,
// as argocd-image-updater writes them back to Git: the shared
// .argocd-source.yaml, then the Application's own, which a later commit
// adds.
func TestOverrideFilesWriteBack(t *testing.T) {
	files := map[string]string{
		"manifests/kustomization.yaml":    "resources: [deployment.yaml]\n",
		"manifests/deployment.yaml":       deployment("web", "registry.example.com/web:1.0.0", 1),
		"manifests/.argocd-source.yaml":   "kustomize:\n  images: [registry.example.com/web:1.1.0]\n",
		"manifests/.argocd-source-x.yaml": "kustomize:\n  images: [registry.example.com/web:9.9.9]\n",
	}
	f := newFixture(t, files)
	f.application(&v1alpha1.SyncPolicyAutomated{}, nil)
	f.waitSynced(f.head)
	if got, want := f.deploymentImage("web"), "registry.example.com/web:1.1.0"; got != want {
		t.Errorf("image = %q, want %q (from .argocd-source.yaml)", got, want)
	}
	rev := f.push(map[string]string{
		"manifests/.argocd-source-" + f.name + ".yaml": "kustomize:\n  images: [registry.example.com/web:1.2.0]\n",
	}, nil, "write back web:1.2.0")
	f.waitSynced(rev)
	if got, want := f.deploymentImage("web"), "registry.example.com/web:1.2.0"; got != want {
		t.Errorf("image = %q, want %q (from the Application's own override file)", got, want)
	}
}

// TestJsonnetSource syncs a directory of Jsonnet with top-level arguments,
// external variables and a library, as Argo CD renders it.
func TestJsonnetSource(t *testing.T) {
	files := map[string]string{
		"lib/cm.libsonnet": "{ cm(name, data):: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: name }, data: data } }\n",
		"manifests/settings.jsonnet": `local lib = import 'cm.libsonnet';
function(mode) [lib.cm('settings', { mode: mode, app: std.extVar('app') }), null]
`,
		"manifests/service.yaml": service("web"),
	}
	f := newFixture(t, files)
	f.application(&v1alpha1.SyncPolicyAutomated{}, func(a *v1alpha1.Application) {
		a.Spec.Source.Directory = &v1alpha1.ApplicationSourceDirectory{Jsonnet: &runtime.RawExtension{Raw: []byte(
			`{"tlas":[{"name":"mode","value":"fast"}],"extVars":[{"name":"app","value":"$ARGOCD_APP_NAME"}],"libs":["lib"]}`)}}
	})
	f.waitSynced(f.head)
	var cm corev1.ConfigMap
	if err := f.get(&cm, "settings"); err != nil {
		t.Fatal(err)
	}
	if got := cm.Data; got["mode"] != "fast" || got["app"] != f.name {
		t.Errorf("data = %v, want mode=fast and app=%s", got, f.name)
	}
}

// TestHelmCapabilitiesOfTheDestination renders a chart that branches on
// .Capabilities against the test API server, as Argo CD passes the
// destination cluster's version and API versions to helm template.
func TestHelmCapabilitiesOfTheDestination(t *testing.T) {
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := dc.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"manifests/Chart.yaml": "apiVersion: v2\nname: caps\nversion: 0.1.0\n",
		"manifests/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: caps
data:
  version: {{ .Capabilities.KubeVersion.Version | quote }}
  applications: {{ .Capabilities.APIVersions.Has "argoproj.io/v1alpha1/Application" | quote }}
`,
	}
	f := newFixture(t, files)
	f.application(&v1alpha1.SyncPolicyAutomated{}, nil)
	f.waitSynced(f.head)
	var cm corev1.ConfigMap
	if err := f.get(&cm, "caps"); err != nil {
		t.Fatal(err)
	}
	v := version.MustParseGeneric(sv.GitVersion)
	want := map[string]string{"version": "v" + v.String(), "applications": "true"}
	if diff := cmp.Diff(want, cm.Data); diff != "" {
		t.Errorf("capabilities the chart saw (-want +got):\n%s", diff)
	}
}
