package policies

import (
	"context"
	"fmt"

	"github.com/open-policy-agent/opa/v1/rego"
)

// appNamespacePermittedQuery asks the built-in library whether a pattern
// of input.sourceNamespaces matches input.namespace: the very function
// app-namespace calls.
const appNamespacePermittedQuery = `some p in input.sourceNamespaces; data.tollgate.builtin.app_namespace.namespace_pattern_matches(p, input.namespace)`

// appNamespacePermitted is appNamespacePermittedQuery prepared over the
// built-in library, once, on first use.
var appNamespacePermitted = libraryQuery(appNamespacePermittedQuery)

// AppNamespacePermitted reports whether sourceNamespaces, an AppProject's
// spec.sourceNamespaces, permit the Applications of namespace, as the rule
// app-namespace decides it (the built-in library's
// namespace_pattern_matches, evaluated here rather than copied): an exact
// name, a glob, or a /regular expression/. The Argo CD namespace is not
// special here: callers permit it before asking.
func AppNamespacePermitted(ctx context.Context, sourceNamespaces []string, namespace string) (bool, error) {
	pq, err := appNamespacePermitted()
	if err != nil {
		return false, fmt.Errorf("prepare source namespace check: %w", err)
	}
	patterns := make([]any, len(sourceNamespaces))
	for i, p := range sourceNamespaces {
		patterns[i] = p
	}
	rs, err := pq.Eval(ctx, rego.EvalInput(map[string]any{"sourceNamespaces": patterns, "namespace": namespace}))
	if err != nil {
		return false, fmt.Errorf("check source namespace %s: %w", namespace, err)
	}
	return len(rs) > 0, nil
}
