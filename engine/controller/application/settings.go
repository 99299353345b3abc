package application

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/gobwas/glob"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/health"
)

// Settings are the argocd-cm settings the engine applies: Lua health
// checks, system-level ignoreDifferences, resource exclusions and
// inclusions, compare options and sync impersonation. The zero value is
// Argo CD's behaviour without them.
type Settings struct {
	// HealthChecks are Lua health checks keyed by "group/Kind" ("Kind" for
	// the core group; wildcards allowed), for health.Checker.SetOverrides:
	// resource.customizations.health.<group_Kind>, and the health.lua of
	// resource.customizations entries, which the per-kind keys override.
	HealthChecks map[string]string
	// IgnoreDifferences apply to every Application, before its own
	// (resource.customizations.ignoreDifferences.<group_Kind>, .all, and
	// the resource.customizations block).
	IgnoreDifferences []apply.IgnoreDifference
	// Exclusions and Inclusions select the kinds the engine manages
	// (resource.exclusions, resource.inclusions): an excluded kind, or
	// one not included when Inclusions are set, is neither applied,
	// compared nor pruned.
	Exclusions, Inclusions []ResourceFilter
	// IgnoreAggregatedRoles ignores the rules of aggregated ClusterRoles
	// (resource.compareoptions ignoreAggregatedRoles).
	IgnoreAggregatedRoles bool
	// SyncImpersonation makes syncs write as the service account the
	// project's destinationServiceAccounts name for the destination
	// (application.sync.impersonation.enabled: "true" enables it, any
	// other value or none disables it, as in Argo CD 2.13+).
	SyncImpersonation bool
	// KustomizeBuildOptions are the flags of `kustomize build` every
	// Kustomize render gets (kustomize.buildOptions); the repo-server
	// refuses those it does not honour, naming them.
	KustomizeBuildOptions string
}

// ResourceFilter is one entry of resource.exclusions or
// resource.inclusions: glob patterns of API groups, kinds and cluster URLs;
// an empty list matches everything.
type ResourceFilter struct {
	APIGroups []string `json:"apiGroups,omitempty"`
	Kinds     []string `json:"kinds,omitempty"`
	Clusters  []string `json:"clusters,omitempty"`
}

// argocd-cm keys of these settings.
const (
	cmIgnoreDifferencesPrefix = "resource.customizations.ignoreDifferences."
	cmHealthPrefix            = "resource.customizations.health."
	cmCustomizations          = "resource.customizations"
	cmExclusions              = "resource.exclusions"
	cmInclusions              = "resource.inclusions"
	cmCompareOptions          = "resource.compareoptions"
	cmSyncImpersonation       = "application.sync.impersonation.enabled"
	cmKustomizeBuildOptions   = "kustomize.buildOptions"
)

// ignoreSpec is the YAML of a system-level ignoreDifferences entry.
type ignoreSpec struct {
	JSONPointers          []string `json:"jsonPointers,omitempty"`
	JQPathExpressions     []string `json:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// ParseSettings reads Settings from the data of argocd-cm. A key that does
// not parse is an error naming it; its setting is not half-applied.
func ParseSettings(data map[string]string) (Settings, error) {
	var s Settings
	add := func(key, group, kind, text string) error {
		var spec ignoreSpec
		if err := yaml.UnmarshalStrict([]byte(text), &spec); err != nil {
			return fmt.Errorf("argocd-cm %s: %w", key, err)
		}
		s.IgnoreDifferences = append(s.IgnoreDifferences, apply.IgnoreDifference{
			Group: group, Kind: kind, JSONPointers: spec.JSONPointers,
			JQPathExpressions: spec.JQPathExpressions, ManagedFieldsManagers: spec.ManagedFieldsManagers,
		})
		return nil
	}
	if block := data[cmCustomizations]; strings.TrimSpace(block) != "" {
		var entries map[string]map[string]any
		if err := yaml.Unmarshal([]byte(block), &entries); err != nil {
			return Settings{}, fmt.Errorf("argocd-cm %s: %w", cmCustomizations, err)
		}
		for _, gk := range slices.Sorted(maps.Keys(entries)) {
			if script, ok := entries[gk]["health.lua"].(string); ok && script != "" {
				s.setHealthCheck(gk, script)
			}
			text, ok := entries[gk]["ignoreDifferences"].(string)
			if !ok {
				continue
			}
			group, kind := splitGroupKind(gk, "/")
			if err := add(cmCustomizations+" "+gk, group, kind, text); err != nil {
				return Settings{}, err
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(data)) {
		if gk, ok := strings.CutPrefix(k, cmHealthPrefix); ok && strings.TrimSpace(data[k]) != "" {
			group, kind := splitGroupKind(gk, "_")
			s.setHealthCheck(health.CustomizationKey(schema.GroupKind{Group: group, Kind: kind}), data[k])
		}
	}
	var keys []string
	for k := range data {
		if strings.HasPrefix(k, cmIgnoreDifferencesPrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		gk := strings.TrimPrefix(k, cmIgnoreDifferencesPrefix)
		group, kind := "*", "*"
		if gk != "all" {
			group, kind = splitGroupKind(gk, "_")
		}
		if err := add(k, group, kind, data[k]); err != nil {
			return Settings{}, err
		}
	}
	for _, f := range []struct {
		key string
		out *[]ResourceFilter
	}{{cmExclusions, &s.Exclusions}, {cmInclusions, &s.Inclusions}} {
		if text := data[f.key]; strings.TrimSpace(text) != "" {
			if err := yaml.UnmarshalStrict([]byte(text), f.out); err != nil {
				return Settings{}, fmt.Errorf("argocd-cm %s: %w", f.key, err)
			}
			for i, rf := range *f.out {
				for _, p := range append(append(append([]string{}, rf.APIGroups...), rf.Kinds...), rf.Clusters...) {
					if _, err := glob.Compile(p); err != nil {
						return Settings{}, fmt.Errorf("argocd-cm %s[%d]: pattern %q: %w", f.key, i, p, err)
					}
				}
			}
		}
	}
	if text := data[cmCompareOptions]; strings.TrimSpace(text) != "" {
		var co struct {
			IgnoreAggregatedRoles              bool   `json:"ignoreAggregatedRoles"`
			IgnoreResourceStatusField          string `json:"ignoreResourceStatusField"`
			IgnoreDifferencesOnResourceUpdates *bool  `json:"ignoreDifferencesOnResourceUpdates"`
		}
		if err := yaml.UnmarshalStrict([]byte(text), &co); err != nil {
			return Settings{}, fmt.Errorf("argocd-cm %s: %w", cmCompareOptions, err)
		}
		switch co.IgnoreResourceStatusField {
		case "", "all", "crd":
		default:
			// tollgate never compares status; comparing it would report
			// drift that Argo CD with this setting reports, and tollgate not.
			return Settings{}, fmt.Errorf("argocd-cm %s: ignoreResourceStatusField %q is not supported: tollgate never compares status (all)", cmCompareOptions, co.IgnoreResourceStatusField)
		}
		s.IgnoreAggregatedRoles = co.IgnoreAggregatedRoles
	}
	s.SyncImpersonation = data[cmSyncImpersonation] == "true"
	s.KustomizeBuildOptions = strings.TrimSpace(data[cmKustomizeBuildOptions])
	if s.IgnoreAggregatedRoles {
		s.IgnoreDifferences = append(s.IgnoreDifferences, apply.IgnoreDifference{
			Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", JQPathExpressions: []string{`select(.aggregationRule != null) | .rules`},
		})
	}
	return s, nil
}

// setHealthCheck records the health check of a "group/Kind" key.
func (s *Settings) setHealthCheck(gk, script string) {
	if s.HealthChecks == nil {
		s.HealthChecks = map[string]string{}
	}
	s.HealthChecks[gk] = script
}

// splitGroupKind splits "group<sep>Kind" at the last sep; no sep (or an
// empty group) is a kind of the core group.
func splitGroupKind(gk, sep string) (string, string) {
	i := strings.LastIndex(gk, sep)
	if i < 0 {
		return "", gk
	}
	return gk[:i], gk[i+len(sep):]
}

// Managed reports whether objects of group and kind on the cluster at
// server are managed: not excluded, and included when there are
// inclusions, as Argo CD's IsExcludedResource decides.
func (s *Settings) Managed(group, kind, server string) bool {
	if s == nil {
		return true
	}
	for _, f := range s.Exclusions {
		if f.matches(group, kind, server) {
			return false
		}
	}
	if len(s.Inclusions) == 0 {
		return true
	}
	for _, f := range s.Inclusions {
		if f.matches(group, kind, server) {
			return true
		}
	}
	return false
}

func (f ResourceFilter) matches(group, kind, server string) bool {
	return matchAny(f.APIGroups, group) && matchAny(f.Kinds, kind) && matchAny(f.Clusters, server)
}

// matchAny reports whether value matches one of the glob patterns; an
// empty list matches everything.
func matchAny(patterns []string, value string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if g, err := glob.Compile(p); err == nil && g.Match(value) {
			return true
		}
	}
	return false
}
