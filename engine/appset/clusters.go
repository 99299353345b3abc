package appset

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// Argo CD's cluster Secrets.
const (
	// SecretTypeLabel marks Argo CD's Secrets by type.
	SecretTypeLabel = "argocd.argoproj.io/secret-type"
	// SecretTypeCluster is the SecretTypeLabel value of a cluster.
	SecretTypeCluster = "cluster"
	// InClusterServer and InClusterName are the cluster the controller
	// runs in.
	InClusterServer = "https://kubernetes.default.svc"
	InClusterName   = "in-cluster"
	// LastAppliedAnnotation is kubectl's record of a client-side apply:
	// the whole object as applied, a Secret's data (its bearer token)
	// included. It is never a parameter.
	LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
)

// clusterKeys are the data keys of a cluster Secret a clusters generator
// reads; the rest (its credentials) never leaves the controller.
var clusterKeys = []string{"name", "server", "project"}

// ClusterSecretsForGeneration returns the Argo CD cluster Secrets among
// secrets as clusters generators may see them: name, namespace, labels,
// the annotations but LastAppliedAnnotation, and the data keys name,
// server and project (from data, or stringData as a manifest in Git may
// carry them); nothing else, so that no credential leaves the controller
// or the CLI for the repo-server, a parameter or an output.
func ClusterSecretsForGeneration(secrets []corev1.Secret) []corev1.Secret {
	var out []corev1.Secret
	for _, s := range secrets {
		if s.Labels[SecretTypeLabel] != SecretTypeCluster {
			continue
		}
		c := corev1.Secret{}
		c.Name, c.Namespace, c.Labels, c.Annotations = s.Name, s.Namespace, s.Labels, clusterAnnotations(s.Annotations)
		c.Data = map[string][]byte{}
		for _, k := range clusterKeys {
			if v, ok := s.Data[k]; ok {
				c.Data[k] = v
			} else if v, ok := s.StringData[k]; ok {
				c.Data[k] = []byte(v)
			}
		}
		out = append(out, c)
	}
	return out
}

// clusterAnnotations returns a cluster Secret's annotations without
// LastAppliedAnnotation (a copy when it was there): Argo CD passes that
// one on, tollgate does not, as it holds the Secret's data.
func clusterAnnotations(m map[string]string) map[string]string {
	if _, ok := m[LastAppliedAnnotation]; !ok {
		return m
	}
	out := maps.Clone(m)
	delete(out, LastAppliedAnnotation)
	return out
}

// clusters returns one parameter set per cluster Secret the selector
// matches, and first the in-cluster destination when the selector is
// empty and no Secret describes it, as Argo CD's clusters generator does.
// The parameters are name, nameNormalized, server, project and the
// Secret's labels and annotations but LastAppliedAnnotation, whatever
// Sources.Clusters gives (ClusterSecretsForGeneration strips it before).
func (g *generator) clusters(ctx context.Context, field string, raw any) ([]map[string]any, error) {
	var c v1alpha1.ClusterGenerator
	if err := fromMap(field, raw, &c); err != nil {
		return nil, err
	}
	if g.src.Clusters == nil {
		return nil, fmt.Errorf("%s: no cluster Secrets to read", field)
	}
	secrets, err := g.src.Clusters(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: list cluster Secrets: %w", field, err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&c.Selector)
	if err != nil {
		return nil, fmt.Errorf("%s.selector: %w", field, err)
	}
	var out []map[string]any
	hasInCluster := false
	var matched []corev1.Secret
	for _, s := range secrets {
		if s.Labels[SecretTypeLabel] != SecretTypeCluster {
			continue
		}
		if secretValue(s, "server") == InClusterServer {
			hasInCluster = true
		}
		if sel.Matches(labels.Set(s.Labels)) {
			matched = append(matched, s)
		}
	}
	if len(c.Selector.MatchLabels) == 0 && len(c.Selector.MatchExpressions) == 0 && !hasInCluster {
		out = append(out, map[string]any{
			"name": InClusterName, "nameNormalized": InClusterName, "server": InClusterServer, "project": "",
		})
	}
	slices.SortFunc(matched, func(a, b corev1.Secret) int {
		return cmp.Compare(secretValue(a, "name"), secretValue(b, "name"))
	})
	for _, s := range matched {
		name := secretValue(s, "name")
		params := map[string]any{
			"name": name, "nameNormalized": SanitizeName(name), "server": secretValue(s, "server"), "project": secretValue(s, "project"),
		}
		annotations := clusterAnnotations(s.Annotations)
		if g.r.goTemplate {
			params["metadata"] = map[string]any{"labels": stringMap(s.Labels), "annotations": stringMap(annotations)}
		} else {
			for k, v := range s.Labels {
				params["metadata.labels."+k] = v
			}
			for k, v := range annotations {
				params["metadata.annotations."+k] = v
			}
		}
		out = append(out, params)
	}
	for _, params := range out {
		if err := g.addValues(field, params, c.Values); err != nil {
			return nil, err
		}
	}
	if c.FlatList {
		all := make([]any, len(out))
		for i, p := range out {
			all[i] = p
		}
		return []map[string]any{{"clusters": all}}, nil
	}
	return out, nil
}

// secretValue reads a key of a Secret's data, or of its stringData as a
// manifest in Git may carry it.
func secretValue(s corev1.Secret, key string) string {
	if v, ok := s.Data[key]; ok {
		return string(v)
	}
	return s.StringData[key]
}

// stringMap copies the non-empty entries of m. It stays a
// map[string]string, as in Argo CD, where a selector therefore cannot
// match on it in goTemplate mode.
func stringMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if v != "" {
			out[k] = v
		}
	}
	return out
}
