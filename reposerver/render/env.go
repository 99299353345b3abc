package render

import (
	"fmt"
	"os"
	"strings"
)

// BuildEnv is Argo CD's build environment of one Application source: the
// ARGOCD_APP_* variables that Argo CD substitutes into Helm parameter
// values and value file paths, Kustomize images and common labels (common
// annotations with commonAnnotationsEnvsubst) and Jsonnet top-level
// arguments and external variables. Nothing else is substituted, and the
// process environment never is.
type BuildEnv struct {
	// AppName is the Application's name; Namespace its destination
	// namespace; Project its AppProject.
	AppName, Namespace, Project string
	// Revision is the resolved commit of the source ("" when unknown, as
	// for a working tree under `tollgate test`).
	Revision string
	// RepoURL, Path and TargetRevision are the source's fields.
	RepoURL, Path, TargetRevision string
}

// envVar is one variable of an environment.
type envVar struct{ name, value string }

// list returns the variables in the order Argo CD lists them (newEnv).
func (e BuildEnv) list() []envVar {
	short := func(n int) string {
		if len(e.Revision) > n {
			return e.Revision[:n]
		}
		return e.Revision
	}
	return []envVar{
		{"ARGOCD_APP_NAME", e.AppName},
		{"ARGOCD_APP_NAMESPACE", e.Namespace},
		{"ARGOCD_APP_PROJECT_NAME", e.Project},
		{"ARGOCD_APP_REVISION", e.Revision},
		{"ARGOCD_APP_REVISION_SHORT", short(7)},
		{"ARGOCD_APP_REVISION_SHORT_8", short(8)},
		{"ARGOCD_APP_SOURCE_REPO_URL", e.RepoURL},
		{"ARGOCD_APP_SOURCE_PATH", e.Path},
		{"ARGOCD_APP_SOURCE_TARGET_REVISION", e.TargetRevision},
	}
}

// vars returns the variables by name.
func (e BuildEnv) vars() map[string]string {
	return varMap(e.list())
}

// varMap returns vs by name.
func varMap(vs []envVar) map[string]string {
	m := make(map[string]string, len(vs))
	for _, v := range vs {
		m[v.name] = v.value
	}
	return m
}

// Envsubst expands $VAR and ${VAR} in s as Argo CD's Env.Envsubst does:
// with os.Expand over the build variables only, unknown names expand to
// "", and "$$" is a literal "$".
func (e BuildEnv) Envsubst(s string) string {
	return envsubst(s, e.vars())
}

// envsubst is Argo CD's Env.Envsubst over vars.
func envsubst(s string, vars map[string]string) string {
	return os.Expand(s, func(name string) string {
		if name == "$" {
			return "$"
		}
		return vars[name]
	})
}

// envsubstMap returns m with every value expanded.
func (e BuildEnv) envsubstMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = e.Envsubst(v)
	}
	return out
}

// valueFile expands a Helm value file path as Argo CD's
// getResolvedValueFiles does: "$name/rest" naming the ref of another source
// keeps its prefix and has only rest expanded; any other path is expanded
// whole. A "$name/" prefix that is neither a ref nor a build variable is an
// error.
func (e BuildEnv) valueFile(vf string, refs map[string]string) (string, error) {
	name, ok := strings.CutPrefix(vf, "$")
	if !ok {
		return e.Envsubst(vf), nil
	}
	name, rest, slash := strings.Cut(name, "/")
	if _, found := refs[name]; found {
		if !slash {
			return vf, nil
		}
		return "$" + name + "/" + e.Envsubst(rest), nil
	}
	if _, found := e.vars()[strings.TrimSuffix(strings.TrimPrefix(name, "{"), "}")]; found {
		return e.Envsubst(vf), nil
	}
	return "", fmt.Errorf("no source of the application has ref %q", name)
}
