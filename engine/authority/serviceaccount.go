package authority

import (
	"fmt"
	"strings"

	"github.com/gobwas/glob"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// serviceAccountDisallowedChars may not appear in a destinationServiceAccounts
// entry's defaultServiceAccount (Argo CD's serviceAccountDisallowedCharSet).
const serviceAccountDisallowedChars = "!*[]{}\\/"

// NoServiceAccountError is ServiceAccountFor's error when no entry of the
// project's destinationServiceAccounts matches the destination. Its message
// is Argo CD's.
type NoServiceAccountError struct {
	Server, Namespace string
}

func (e *NoServiceAccountError) Error() string {
	return fmt.Sprintf("no matching service account found for destination server %s and namespace %s", e.Server, e.Namespace)
}

// ServiceAccountFor returns the user a sync to a destination impersonates
// (system:serviceaccount:NS:NAME), as Argo CD 2.13+ derives it from
// proj's spec.destinationServiceAccounts (deriveServiceAccountToImpersonate,
// now settings.DeriveServiceAccountToImpersonate):
//
//   - server is the destination's API server URL; a destination given by
//     name must be resolved to its cluster's server first (name is only
//     for messages). namespace is the destination namespace.
//   - The entries are tried in order and the first whose server and
//     namespace globs (github.com/gobwas/glob, as Argo CD's glob.Match)
//     both match wins. An empty namespace glob matches only an empty
//     namespace; "*" matches any, the empty one included.
//   - The winning entry's defaultServiceAccount is "namespace:name", or
//     "name", which lives in the destination namespace.
//   - No matching entry is a *NoServiceAccountError (Argo CD's message).
//
// A glob that does not compile, or a defaultServiceAccount that is blank or
// holds one of !*[]{}\/, is an error with Argo CD's message when its entry
// is reached. Unlike Argo CD's controller, an entry reached whose server or
// namespace contains "!" is an error too (Argo CD's API refuses such a
// project with that message; its controller would take "!" literally, so
// an entry meant as "every namespace but prod" would silently never
// match). And where Argo CD places a plain "name" in the Application's own
// namespace when the destination has no namespace, ServiceAccountFor
// refuses: it does not impersonate in the control plane's namespace.
func ServiceAccountFor(proj *v1alpha1.AppProject, server, name, namespace string) (string, error) {
	if server == "" {
		return "", fmt.Errorf("derive service account: destination %q is not resolved to a server URL", name)
	}
	if proj == nil {
		return "", &NoServiceAccountError{Server: server, Namespace: namespace}
	}
	for _, item := range proj.Spec.DestinationServiceAccounts {
		if strings.Contains(item.Server, "!") {
			return "", fmt.Errorf("server has an invalid format, '%s'", item.Server)
		}
		if strings.Contains(item.Namespace, "!") {
			return "", fmt.Errorf("namespace has an invalid format, '%s'", item.Namespace)
		}
		serverMatched, err := globMatch(item.Server, server)
		if err != nil {
			return "", fmt.Errorf("invalid glob pattern for destination server: %w", err)
		}
		namespaceMatched, err := globMatch(item.Namespace, namespace)
		if err != nil {
			return "", fmt.Errorf("invalid glob pattern for destination namespace: %w", err)
		}
		if !serverMatched || !namespaceMatched {
			continue
		}
		sa := item.DefaultServiceAccount
		switch {
		case strings.Trim(sa, " ") == "" || strings.ContainsAny(sa, serviceAccountDisallowedChars):
			return "", fmt.Errorf("default service account contains invalid chars '%s'", sa)
		case strings.Contains(sa, ":"):
			return "system:serviceaccount:" + sa, nil
		case namespace == "":
			return "", fmt.Errorf("default service account '%s' names no namespace and destination %s has none; write it as namespace:name", sa, server)
		}
		return "system:serviceaccount:" + namespace + ":" + sa, nil
	}
	return "", &NoServiceAccountError{Server: server, Namespace: namespace}
}

// globMatch reports whether text matches the glob pattern, compiled without
// separators as Argo CD's glob.MatchWithError compiles it.
func globMatch(pattern, text string) (bool, error) {
	g, err := glob.Compile(pattern)
	if err != nil {
		return false, err
	}
	return g.Match(text), nil
}
