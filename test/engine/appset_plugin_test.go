package engine_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestApplicationSetPlugin: a plugin generator asks the HTTP service its
// ConfigMap (in the control-plane namespace) names, with the token its
// Secret holds, through Argo CD's getparams.execute protocol, and
// generates one Application per parameter set the plugin answers.
func TestApplicationSetPlugin(t *testing.T) {
	f := newFixture(t, map[string]string{"apps/alpha/cm.yaml": configMap("alpha", "1")})
	f.project()
	var asked []string
	plugin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ApplicationSetName string `json:"applicationSetName"`
			Input              struct {
				Parameters map[string]string `json:"parameters"`
			} `json:"input"`
		}
		if r.Header.Get("Authorization") != "Bearer pl-t0ken" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		asked = append(asked, req.ApplicationSetName+" "+req.Input.Parameters["team"])
		_, _ = w.Write([]byte(`{"output": {"parameters": [{"shard": "one", "cfg": {"size": "s"}}, {"shard": "two", "cfg": {"size": "m"}}]}}`))
	}))
	defer plugin.Close()
	f.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: f.name + "-plugin", Namespace: argoNS}, StringData: map[string]string{"plugin.token": "pl-t0ken"}})
	f.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: f.name + "-plugin", Namespace: argoNS},
		Data: map[string]string{"baseUrl": plugin.URL, "token": "$" + f.name + "-plugin:plugin.token", "requestTimeout": "10"}})
	set := f.appSet(argoNS, `
spec:
  generators:
  - plugin:
      configMapRef: {name: '%[1]s-plugin'}
      input: {parameters: {team: red}}
  template:
    metadata:
      name: '%[1]s-{{shard}}'
      annotations: {tollgate.dev/size: '{{cfg.size}}'}
    spec:
      project: %[1]s
      source: {repoURL: '%[3]s', targetRevision: '%[4]s', path: apps/alpha}
      destination: {server: 'https://kubernetes.default.svc', namespace: '%[2]s'}
`)
	apps := waitGenerated(t, argoNS, set, f.name+"-one", f.name+"-two")
	if got := apps[f.name+"-two"].Annotations["tollgate.dev/size"]; got != "m" {
		t.Errorf("flattened parameter cfg.size = %q, want m", got)
	}
	if len(asked) == 0 || asked[0] != f.name+" red" {
		t.Errorf("the plugin was asked %q", asked)
	}
}

// placementCRD is Open Cluster Management's PlacementDecision, as much of
// it as the clusterDecisionResource generator reads.
const placementCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: placementdecisions.cluster.open-cluster-management.io
spec:
  group: cluster.open-cluster-management.io
  names: {kind: PlacementDecision, plural: placementdecisions, singular: placementdecision, listKind: PlacementDecisionList}
  scope: Namespaced
  versions:
  - name: v1beta1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// TestApplicationSetClusterDecisionResource: the controller reads a
// PlacementDecision's status (the duck type its ConfigMap describes) and
// generates one Application per decided cluster that has a cluster Secret.
func TestApplicationSetClusterDecisionResource(t *testing.T) {
	f := newFixture(t, map[string]string{"apps/alpha/cm.yaml": configMap("alpha", "1")})
	f.project()
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(placementCRD), &crd.Object); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(t.Context(), crd); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create CRD: %v", err)
	}
	decision := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "PlacementDecision",
		"metadata": map[string]any{"name": f.name, "namespace": argoNS, "labels": map[string]any{"tollgate.dev/test": f.name}},
	}}
	eventually(t, "the PlacementDecision CRD serves", func() (bool, string) {
		err := env.Client.Create(t.Context(), decision)
		return err == nil, errString(err)
	})
	decision.Object["status"] = map[string]any{"decisions": []any{
		map[string]any{"clusterName": f.name + "-east", "reason": "cheap"},
		map[string]any{"clusterName": f.name + "-unknown", "reason": "no Secret"},
	}}
	if err := env.Client.Status().Update(t.Context(), decision); err != nil {
		t.Fatalf("set status: %v", err)
	}
	f.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: f.name + "-east", Namespace: argoNS, Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}},
		StringData: map[string]string{"name": f.name + "-east", "server": "https://east.example.com", "config": `{"tlsClientConfig":{"insecure":false}}`}})
	f.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: f.name + "-placement", Namespace: argoNS},
		Data: map[string]string{"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "placementdecisions", "statusListKey": "decisions", "matchKey": "clusterName"}})
	set := f.appSet(argoNS, `
spec:
  generators:
  - clusterDecisionResource:
      configMapRef: '%[1]s-placement'
      labelSelector: {matchLabels: {tollgate.dev/test: '%[1]s'}}
  template:
    metadata:
      name: '%[1]s-{{clusterName}}'
      annotations: {tollgate.dev/server: '{{server}}', tollgate.dev/reason: '{{reason}}'}
    spec:
      project: %[1]s
      source: {repoURL: '%[3]s', targetRevision: '%[4]s', path: apps/alpha}
      destination: {server: 'https://kubernetes.default.svc', namespace: '%[2]s'}
`)
	apps := waitGenerated(t, argoNS, set, f.name+"-"+f.name+"-east")
	if a := apps[f.name+"-"+f.name+"-east"]; a.Annotations["tollgate.dev/server"] != "https://east.example.com" || a.Annotations["tollgate.dev/reason"] != "cheap" {
		t.Errorf("parameters: %v", a.Annotations)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return strings.TrimSpace(err.Error())
}
