package appset

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tollgate-dev/tollgate/reposerver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// token is a cluster Secret's credential, which no parameter may carry.
const token = "eyJhbGciOiJSUzI1NiJ9.cluster-bearer-token"

// appliedClusterSecret is a cluster Secret as `kubectl apply` leaves it:
// its data repeated in the last-applied annotation.
func appliedClusterSecret() corev1.Secret {
	config := `{"bearerToken":"` + token + `","tlsClientConfig":{"insecure":false}}`
	lastApplied := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"cluster-prod"},"stringData":{"name":"prod","server":"https://prod.example.com","config":` + jsonString(config) + `}}`
	return corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-prod", Namespace: "argocd",
			Labels:      map[string]string{reposerver.SecretTypeLabel: reposerver.SecretTypeCluster, "env": "prod"},
			Annotations: map[string]string{reposerver.LastAppliedAnnotation: lastApplied, "team": "web"},
		},
		Data:       map[string][]byte{"name": []byte("prod"), "server": []byte("https://prod.example.com"), "config": []byte(config)},
		StringData: map[string]string{"project": "team", "password": token},
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestClusterSecretsForGeneration: only the cluster Secrets, with their
// labels, their annotations but the last-applied one, and name, server
// and project.
func TestClusterSecretsForGeneration(t *testing.T) {
	repoSecret := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "repo", Namespace: "argocd", Labels: map[string]string{reposerver.SecretTypeLabel: "repository"}},
		Data: map[string][]byte{"url": []byte("https://git.example.com"), "password": []byte(token)}}
	got := reposerver.ClusterSecretsForGeneration([]corev1.Secret{appliedClusterSecret(), repoSecret})
	want := []corev1.Secret{{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-prod", Namespace: "argocd",
			Labels:      map[string]string{reposerver.SecretTypeLabel: reposerver.SecretTypeCluster, "env": "prod"},
			Annotations: map[string]string{"team": "web"},
		},
		Data: map[string][]byte{"name": []byte("prod"), "server": []byte("https://prod.example.com"), "project": []byte("team")},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reposerver.ClusterSecretsForGeneration (-want +got):\n%s", diff)
	}
	if orig := appliedClusterSecret(); orig.Annotations[reposerver.LastAppliedAnnotation] == "" {
		t.Fatal("the fixture lost its annotation")
	}
}

// TestClusterParamsWithoutCredentials: a template that asks for the
// last-applied annotation, or for every annotation, gets neither it nor
// anything of the Secret's data, in goTemplate and flat mode, even when
// the Secret reaches the generator unfiltered.
func TestClusterParamsWithoutCredentials(t *testing.T) {
	secrets := []corev1.Secret{appliedClusterSecret()}
	src := Sources{Clusters: func(context.Context) ([]corev1.Secret, error) { return secrets, nil }}
	for _, tc := range []struct {
		name, manifest string
		// want is the generated Application's annotations.
		want   map[string]any
		params map[string]any
	}{
		{
			name: "goTemplate",
			manifest: header + `  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - clusters: {selector: {matchLabels: {env: prod}}}
  template:
    metadata:
      name: '{{ .name }}'
      annotations:
        leak: '{{ index .metadata.annotations "kubectl.kubernetes.io/last-applied-configuration" }}'
        all: '{{ .metadata.annotations }}'
    spec:
      project: '{{ .project }}'
      source: {repoURL: https://git.example.com/config.git, path: guestbook}
      destination: {server: '{{ .server }}', namespace: guestbook}
`,
			want: map[string]any{"leak": "", "all": "map[team:web]"},
			params: map[string]any{"name": "prod", "nameNormalized": "prod", "server": "https://prod.example.com", "project": "team",
				"metadata": map[string]any{"labels": map[string]any{reposerver.SecretTypeLabel: reposerver.SecretTypeCluster, "env": "prod"}, "annotations": map[string]any{"team": "web"}}},
		},
		{
			name: "flat",
			manifest: header + `  generators:
  - clusters: {selector: {matchLabels: {env: prod}}}
  template:
    metadata:
      name: '{{name}}'
      annotations:
        leak: '{{metadata.annotations.kubectl.kubernetes.io/last-applied-configuration}}'
        team: '{{metadata.annotations.team}}'
    spec:
      project: '{{project}}'
      source: {repoURL: https://git.example.com/config.git, path: guestbook}
      destination: {server: '{{server}}', namespace: guestbook}
`,
			want: map[string]any{"leak": "{{metadata.annotations.kubectl.kubernetes.io/last-applied-configuration}}", "team": "web"},
			params: map[string]any{"name": "prod", "nameNormalized": "prod", "server": "https://prod.example.com", "project": "team",
				"metadata.labels." + reposerver.SecretTypeLabel: reposerver.SecretTypeCluster, "metadata.labels.env": "prod", "metadata.annotations.team": "web"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gen, err := Generate(t.Context(), decodeSet(t, tc.manifest), src)
			if err != nil {
				t.Fatal(err)
			}
			if len(gen) != 1 {
				t.Fatalf("generated %d Applications, want 1", len(gen))
			}
			b, err := json.Marshal(gen)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), token) || strings.Contains(string(b), "bearerToken") {
				t.Errorf("the generated Application or its parameters hold the Secret's data:\n%s", b)
			}
			var got struct {
				Application struct {
					Metadata struct {
						Annotations map[string]any `json:"annotations"`
					} `json:"metadata"`
				} `json:"application"`
				Params map[string]any `json:"params"`
			}
			if err := json.Unmarshal(b[1:len(b)-1], &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Application.Metadata.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.params, got.Params); diff != "" {
				t.Errorf("params (-want +got):\n%s", diff)
			}
		})
	}
}
