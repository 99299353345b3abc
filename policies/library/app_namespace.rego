# app-namespace: Applications and AppProjects live in the Argo CD namespace.
#
# What: an Application or AppProject whose metadata.namespace is set and is
# not the Argo CD namespace. An Application elsewhere passes when its
# AppProject lists that namespace in spec.sourceNamespaces (Argo CD's
# "applications in any namespace"; exact names, globs or /regular
# expressions/). A missing namespace passes: the CLI cannot know where the
# manifest will be applied, and kubectl -n argocd or the parent Application
# supplies it.
# Why: Argo CD only reads AppProjects from its own namespace and, unless
# configured otherwise, only Applications from there too: the object is
# silently ignored.
# Fix: set metadata.namespace to the Argo CD namespace (or, for an
# Application, enable applications in any namespace and list the namespace
# in the project's spec.sourceNamespaces).
package tollgate.builtin.app_namespace

import data.tollgate.lib

violation contains v if {
	input.object.kind in {"Application", "AppProject"}
	startswith(input.object.apiVersion, "argoproj.io/")
	ns := lib.namespace_of(input.object)
	ns != ""
	ns != lib.argocd_namespace
	not source_namespace_permitted(ns)
	v := {
		"rule": "app-namespace",
		"msg": sprintf(
			"%s is in namespace %q, but Argo CD reads it only from its own namespace %q; set metadata.namespace to %q",
			[lib.describe(input.object), ns, lib.argocd_namespace, lib.argocd_namespace],
		),
		"path": ["metadata", "namespace"],
	}
}

# source_namespace_permitted mirrors Argo CD's
# AppProject.IsAppNamespacePermitted for an Application.
source_namespace_permitted(ns) if {
	lib.reviewed_application
	some pattern in lib.project_list(input.project, "sourceNamespaces")
	namespace_pattern_matches(pattern, ns)
}

namespace_pattern_matches(pattern, ns) if pattern == ns

namespace_pattern_matches(pattern, ns) if {
	is_string(pattern)
	not is_regex(pattern)
	lib.glob_match(pattern, ns)
}

namespace_pattern_matches(pattern, ns) if {
	is_string(pattern)
	is_regex(pattern)
	regex.match(substring(pattern, 1, count(pattern) - 2), ns)
}

is_regex(pattern) if {
	count(pattern) > 2
	startswith(pattern, "/")
	endswith(pattern, "/")
}
