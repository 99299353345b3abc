package appset

import (
	"context"
	"fmt"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// clusterDecisions returns one parameter set per cluster decision the
// controller read for the clusterDecisionResource generator at field
// (Sources.Decisions) whose matchKey names a cluster Secret, as Argo CD's
// generator does: the cluster's name and server, every key of the
// decision, and values.<key> as written (Argo CD does not render them).
func (g *generator) clusterDecisions(ctx context.Context, field string, raw any) ([]map[string]any, error) {
	var d v1alpha1.DuckTypeGenerator
	if err := fromMap(field, raw, &d); err != nil {
		return nil, err
	}
	read, ok := g.src.Decisions[field]
	if !ok {
		return nil, fmt.Errorf("%s: %w: the controller reads the cluster decision resource (one whose configMapRef, name or labelSelector is rendered from parameters is not read)", field, ErrNotGeneratedHere)
	}
	if g.src.Clusters == nil {
		return nil, fmt.Errorf("%s: no cluster Secrets to read", field)
	}
	secrets, err := g.src.Clusters(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: list cluster Secrets: %w", field, err)
	}
	servers := map[string]string{}
	for _, s := range secrets {
		if s.Labels[reposerver.SecretTypeLabel] == reposerver.SecretTypeCluster {
			servers[reposerver.SecretValue(&s, "name")] = reposerver.SecretValue(&s, "server")
		}
	}
	var out []map[string]any
	for _, decision := range read.Decisions {
		name := decision[read.MatchKey]
		server, ok := servers[name]
		if name == "" || !ok {
			continue // no cluster of that name: skipped, as in Argo CD
		}
		params := map[string]any{"name": name, "server": server}
		for k, v := range decision {
			params[k] = v
		}
		if len(d.Values) > 0 {
			if g.r.goTemplate {
				values := map[string]any{}
				for k, v := range d.Values {
					values[k] = v
				}
				params["values"] = values
			} else {
				for k, v := range d.Values {
					params["values."+k] = v
				}
			}
		}
		out = append(out, params)
	}
	return out, nil
}
