package appset

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// clusters returns one parameter set per cluster Secret the selector
// matches, and first the in-cluster destination when the selector is
// empty and no Secret describes it, as Argo CD's clusters generator does.
// The parameters are name, nameNormalized, server, project and the
// Secret's labels and annotations but reposerver.LastAppliedAnnotation, whatever
// Sources.Clusters gives (reposerver.ClusterSecretsForGeneration strips it before).
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
		if s.Labels[reposerver.SecretTypeLabel] != reposerver.SecretTypeCluster {
			continue
		}
		if reposerver.SecretValue(&s, "server") == reposerver.InClusterServer {
			hasInCluster = true
		}
		if sel.Matches(labels.Set(s.Labels)) {
			matched = append(matched, s)
		}
	}
	if len(c.Selector.MatchLabels) == 0 && len(c.Selector.MatchExpressions) == 0 && !hasInCluster {
		out = append(out, map[string]any{
			"name": reposerver.InClusterName, "nameNormalized": reposerver.InClusterName, "server": reposerver.InClusterServer, "project": "",
		})
	}
	slices.SortFunc(matched, func(a, b corev1.Secret) int {
		return cmp.Compare(reposerver.SecretValue(&a, "name"), reposerver.SecretValue(&b, "name"))
	})
	for _, s := range matched {
		name := reposerver.SecretValue(&s, "name")
		params := map[string]any{
			"name": name, "nameNormalized": SanitizeName(name), "server": reposerver.SecretValue(&s, "server"), "project": reposerver.SecretValue(&s, "project"),
		}
		annotations := reposerver.ClusterAnnotations(s.Annotations)
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
