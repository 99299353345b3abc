package v1alpha1

import (
	"fmt"
	"regexp"

	"github.com/gobwas/glob"
)

// NamespaceMatches reports whether ns matches one of patterns as Argo CD's
// glob.MatchStringInList(patterns, ns, glob.REGEXP) decides it for
// application.namespaces and an AppProject's sourceNamespaces: an entry
// between slashes is a regular expression found anywhere in ns (Go's RE2:
// Argo CD's regexp2 also accepts lookarounds, which RE2 refuses, so such
// an entry matches nothing here), any other a glob without separators (an
// exact name is a glob too). An entry that does not compile matches
// nothing.
func NamespaceMatches(patterns []string, ns string) bool {
	for _, p := range patterns {
		if len(p) > 2 && p[0] == '/' && p[len(p)-1] == '/' {
			if re, err := regexp.Compile(p[1 : len(p)-1]); err == nil && re.MatchString(ns) {
				return true
			}
			continue
		}
		if p == ns {
			return true
		}
		if g, err := glob.Compile(p); err == nil && g.Match(ns) {
			return true
		}
	}
	return false
}

// NamespaceEnabled reports whether the Applications of ns are served by a
// controller of the control-plane namespace controlNS configured with
// application namespaces patterns (Argo CD's IsNamespaceEnabled): the
// control-plane namespace always, others when a pattern matches.
func NamespaceEnabled(ns, controlNS string, patterns []string) bool {
	return ns == controlNS || NamespaceMatches(patterns, ns)
}

// IsAppNamespacePermitted reports whether app may use p from its namespace
// (Argo CD's AppProject.IsAppNamespacePermitted): an Application of the
// control-plane namespace (or without one) may use any project, one
// elsewhere only a project whose spec.sourceNamespaces matches its
// namespace. The default project is no exception.
func (p *AppProject) IsAppNamespacePermitted(app *Application, controlNS string) bool {
	return p.PermitsNamespace(app.Namespace, controlNS)
}

// PermitsNamespace reports whether the Applications (and ApplicationSets)
// of namespace may use p: see IsAppNamespacePermitted.
func (p *AppProject) PermitsNamespace(namespace, controlNS string) bool {
	return namespace == "" || namespace == controlNS || NamespaceMatches(p.Spec.SourceNamespaces, namespace)
}

// ErrProjectNotPermitted is Argo CD's message (util/argo
// ErrProjectNotPermitted) for an Application whose namespace its project
// does not list in spec.sourceNamespaces.
func ErrProjectNotPermitted(app *Application) error {
	return fmt.Errorf("application '%s' in namespace '%s' is not permitted to use project '%s'", app.Name, app.Namespace, app.ProjectName())
}

// QualifiedName is the name Argo CD's CLI and UI give the Application:
// "<namespace>/<name>" outside the control-plane namespace controlNS, the
// name alone in it.
func (a *Application) QualifiedName(controlNS string) string {
	if a.Namespace == "" || a.Namespace == controlNS {
		return a.Name
	}
	return a.Namespace + "/" + a.Name
}
