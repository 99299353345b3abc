package policies

import (
	"context"
	"fmt"
	"io/fs"
	"sync"

	"github.com/open-policy-agent/opa/v1/rego"
)

// sourcePermittedQuery asks the built-in library whether the sourceRepos
// of input permit input.repo: the very function project-source-denied
// calls.
const sourcePermittedQuery = `data.tollgate.lib.source_permitted(data.tollgate.lib.source_patterns({"spec": {"sourceRepos": input.sourceRepos}}), input.repo)`

// sourcePermitted is sourcePermittedQuery prepared over the built-in
// library, once, on first use.
var sourcePermitted = libraryQuery(sourcePermittedQuery)

// libraryQuery returns query prepared over the built-in library, once, on
// first use, for callers that ask the library one question outside an
// evaluation (a function of a rule, not a rule). Preparing reads nothing
// and is remembered, so no caller's deadline may cut it short.
func libraryQuery(query string) func() (*rego.PreparedEvalQuery, error) {
	return sync.OnceValues(func() (*rego.PreparedEvalQuery, error) {
		lib, err := fs.Sub(library, libraryDir)
		if err != nil {
			return nil, err
		}
		modules, err := loadFS(lib)
		if err != nil {
			return nil, err
		}
		for _, m := range modules {
			m.Comments = nil
		}
		compiler, err := compileModules(modules)
		if err != nil {
			return nil, err
		}
		return prepare(context.Background(), compiler, query)
	})
}

// SourcePermitted reports whether sourceRepos, an AppProject's
// spec.sourceRepos, permit the repository repoURL, as the rule
// project-source-denied decides it (the built-in library's
// source_permitted, evaluated here rather than copied): URLs and patterns
// normalized as Argo CD normalizes them, some allow pattern matching and
// no "!" pattern rejecting. For callers that hold a repository URL from
// outside an Application's spec (a history entry, a generator) and must
// not read what the project does not permit. Exemptions do not apply: it
// judges the list, not an object.
func SourcePermitted(ctx context.Context, sourceRepos []string, repoURL string) (bool, error) {
	pq, err := sourcePermitted()
	if err != nil {
		return false, fmt.Errorf("prepare source repository check: %w", err)
	}
	repos := make([]any, len(sourceRepos))
	for i, r := range sourceRepos {
		repos[i] = r
	}
	rs, err := pq.Eval(ctx, rego.EvalInput(map[string]any{"sourceRepos": repos, "repo": repoURL}))
	if err != nil {
		return false, fmt.Errorf("check source repository %s: %w", repoURL, err)
	}
	return rs.Allowed(), nil
}
