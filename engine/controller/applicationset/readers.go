package applicationset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// DefaultPluginRequeue is how often a plugin generator's plugin is asked
// again without requeueAfterSeconds, as in Argo CD.
const DefaultPluginRequeue = 30 * time.Minute

// argoCDSecret is the Secret a plugin token "$key" names (Argo CD's
// argocd-secret).
const argoCDSecret = "argocd-secret"

// generatorInputs reads, for set's plugin and clusterDecisionResource
// generators, what the repo-server cannot: the plugins' ConfigMaps and
// tokens, and the cluster decision resources, all in the control-plane
// namespace as Argo CD reads them. A generator whose references are
// rendered from parameters is not read (the repo-server then refuses it).
func (r *Reconciler) generatorInputs(ctx context.Context, set *v1alpha1.ApplicationSet, req *reposerver.AppSetRequest) error {
	var err error
	set.WalkGenerators(func(field, kind string, raw map[string]any) {
		if err != nil || (kind != "plugin" && kind != "clusterDecisionResource") {
			return
		}
		b, _ := json.Marshal(raw)
		if strings.Contains(string(b), "{{") && (kind == "clusterDecisionResource" || strings.Contains(string(b), `"configMapRef":{"name":"{{`)) {
			return
		}
		if kind == "plugin" {
			var gen v1alpha1.PluginGenerator
			if err = json.Unmarshal(b, &gen); err == nil {
				var p reposerver.PluginAccess
				if p, err = r.plugin(ctx, gen.ConfigMapRef.Name); err == nil {
					req.Plugins = append(req.Plugins, p)
				}
			}
		} else {
			var gen v1alpha1.DuckTypeGenerator
			if err = json.Unmarshal(b, &gen); err == nil {
				var d reposerver.ClusterDecisions
				if d, err = r.clusterDecisions(ctx, &gen); err == nil {
					if req.Decisions == nil {
						req.Decisions = map[string]reposerver.ClusterDecisions{}
					}
					req.Decisions[field] = d
				}
			}
		}
		if err != nil {
			err = fmt.Errorf("%s: %w", field, err)
		}
	})
	return err
}

// plugin reads the generator plugin of ConfigMap name, with Argo CD's
// errors.
func (r *Reconciler) plugin(ctx context.Context, name string) (reposerver.PluginAccess, error) {
	var cm corev1.ConfigMap
	if err := r.deps.APIReader.Get(ctx, types.NamespacedName{Namespace: r.opts.Namespace, Name: name}, &cm); err != nil {
		return reposerver.PluginAccess{}, fmt.Errorf("error getting plugin from generator: error fetching ConfigMap: %w", err)
	}
	p := reposerver.PluginAccess{ConfigMapName: name, BaseURL: cm.Data["baseUrl"]}
	tokenRef := cm.Data["token"]
	switch {
	case p.BaseURL == "":
		return p, errors.New("error getting plugin from generator: error fetching ConfigMap: baseUrl not found in ConfigMap")
	case tokenRef == "":
		return p, errors.New("error getting plugin from generator: error fetching ConfigMap: token not found in ConfigMap")
	case !strings.HasPrefix(tokenRef, "$"):
		return p, fmt.Errorf("error getting plugin from generator: error fetching Secret token: token is empty, or does not reference a secret key starting with '$': %v", tokenRef)
	}
	if t := cm.Data["requestTimeout"]; t != "" {
		secs, err := strconv.Atoi(t)
		if err != nil {
			return p, fmt.Errorf("error getting plugin from generator: error set requestTimeout : %w", err)
		}
		p.RequestTimeout = time.Duration(secs) * time.Second
	}
	// "$key" is a key of argocd-secret, "$secret:key" one of another Secret.
	secretName, key := argoCDSecret, tokenRef[1:]
	if s, k, ok := strings.Cut(tokenRef[1:], ":"); ok {
		secretName, key = s, k
	}
	var s corev1.Secret
	if err := r.deps.APIReader.Get(ctx, types.NamespacedName{Namespace: r.opts.Namespace, Name: secretName}, &s); err != nil {
		return p, fmt.Errorf("error getting plugin from generator: error fetching Secret token: error fetching secret %s/%s: %w", r.opts.Namespace, secretName, err)
	}
	token, ok := s.Data[key]
	if !ok {
		return p, fmt.Errorf("error getting plugin from generator: error fetching Secret token: key %q not found in secret %s/%s", key, r.opts.Namespace, secretName)
	}
	p.Token = strings.TrimSpace(string(token))
	return p, nil
}

// clusterDecisions reads the resources gen names, as Argo CD's
// clusterDecisionResource generator does: its ConfigMap says the
// resource's apiVersion and kind (the plural resource name), the status
// list (statusListKey, "clusters" when unset) and the key naming a
// cluster (matchKey); the resources are read by name or label selector.
func (r *Reconciler) clusterDecisions(ctx context.Context, gen *v1alpha1.DuckTypeGenerator) (reposerver.ClusterDecisions, error) {
	var cm corev1.ConfigMap
	if err := r.deps.APIReader.Get(ctx, types.NamespacedName{Namespace: r.opts.Namespace, Name: gen.ConfigMapRef}, &cm); err != nil {
		return reposerver.ClusterDecisions{}, fmt.Errorf("error reading configMapRef: %w", err)
	}
	apiVersion, kind := cm.Data["apiVersion"], cm.Data["kind"]
	group, version, ok := strings.Cut(apiVersion, "/")
	if kind == "" || !ok || group == "" {
		return reposerver.ClusterDecisions{}, errors.New("there is a problem with the apiVersion, kind or resourceName provided")
	}
	selector := gen.LabelSelector.MatchLabels != nil || gen.LabelSelector.MatchExpressions != nil
	if (gen.Name == "") == !selector {
		return reposerver.ClusterDecisions{}, errors.New("there is a problem with the definition of the ClusterDecisionResource generator")
	}
	gvk, err := r.deps.Client.RESTMapper().KindFor(schema.GroupVersionResource{Group: group, Version: version, Resource: kind})
	if err != nil {
		return reposerver.ClusterDecisions{}, fmt.Errorf("failed to get dynamic resources: %w", err)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	opts := []client.ListOption{client.InNamespace(r.opts.Namespace)}
	if gen.Name != "" {
		opts = append(opts, client.MatchingFields{"metadata.name": gen.Name})
	} else {
		sel, err := metav1.LabelSelectorAsSelector(&gen.LabelSelector)
		if err != nil {
			return reposerver.ClusterDecisions{}, fmt.Errorf("labelSelector: %w", err)
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	if err := r.deps.APIReader.List(ctx, list, opts...); err != nil {
		return reposerver.ClusterDecisions{}, fmt.Errorf("failed to get dynamic resources: %w", err)
	}
	if len(list.Items) == 0 {
		return reposerver.ClusterDecisions{}, errors.New("no clusterDecisionResources found")
	}
	out := reposerver.ClusterDecisions{MatchKey: cm.Data["matchKey"]}
	listKey := cm.Data["statusListKey"]
	if listKey == "" {
		listKey = "clusters"
	}
	for _, item := range list.Items {
		entries, found, err := unstructured.NestedSlice(item.Object, "status", listKey)
		if err != nil {
			return out, fmt.Errorf("%s %s: status.%s is not a list: %w", gvk.Kind, item.GetName(), listKey, err)
		}
		if !found {
			continue // no status yet
		}
		for _, e := range entries {
			m, ok := e.(map[string]any)
			if !ok {
				return out, fmt.Errorf("%s %s: an entry of status.%s is not an object", gvk.Kind, item.GetName(), listKey)
			}
			decision := make(map[string]string, len(m))
			for k, v := range m {
				decision[k] = fmt.Sprintf("%v", v)
			}
			out.Decisions = append(out.Decisions, decision)
		}
	}
	return out, nil
}
