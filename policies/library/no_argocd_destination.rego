# no-argocd-destination: workloads stay out of the Argo CD namespace.
#
# What: (a) an Application whose spec.destination.namespace is the Argo CD
# namespace; (b) an AppProject whose spec.destinations permit the Argo CD
# namespace: an allow entry (no "!" pattern) whose namespace pattern matches
# it, such as "*", "argo*" or "argocd", unless a deny entry takes it back on
# that entry's clusters (its "!" namespace pattern rejects it and its server
# or name pattern is "*" or the allow entry's own); (c) a namespaced object rendered by an Application
# that lands in the Argo CD namespace (its metadata.namespace or, when empty,
# the Application's destination namespace). Applications, ApplicationSets and
# AppProjects themselves belong in that namespace and are not checked by (c);
# cluster-scoped objects never are.
# Why: whatever runs in the Argo CD namespace can read its repository and
# cluster credentials and rewrite its configuration: one Application would
# own every cluster Argo CD manages.
# Fix: deploy into a namespace of the team; in AppProjects, add
# {server: "*", namespace: "!argocd"} to spec.destinations or narrow the
# namespace patterns.
package tollgate.builtin.no_argocd_destination

import data.tollgate.lib

# (a) Applications deploying into the Argo CD namespace.

violation contains v if {
	input.object.kind == "Application"
	startswith(input.object.apiVersion, "argoproj.io/")
	dest := lib.destination_of(input.object)
	dest.namespace == lib.argocd_namespace
	v := {
		"rule": "no-argocd-destination",
		"msg": sprintf(
			"Application %q deploys into namespace %q, where Argo CD runs with its repository and cluster credentials; set spec.destination.namespace to a namespace of the team",
			[lib.display_name(input.object), dest.namespace],
		),
		"path": ["spec", "destination", "namespace"],
	}
}

# (b) AppProjects permitting the Argo CD namespace.

violation contains v if {
	input.object.kind == "AppProject"
	startswith(input.object.apiVersion, "argoproj.io/")
	ns := lib.argocd_namespace
	some i in lib.entries_permitting_namespace(input.object, ns)
	pattern := lib.str(input.object.spec.destinations[i], "namespace")
	v := {
		"rule": "no-argocd-destination",
		"msg": sprintf(
			"AppProject %q permits the Argo CD namespace %q through spec.destinations[%d] (namespace %q); add {server: \"*\", namespace: \"!%s\"} to spec.destinations or narrow the namespace pattern",
			[lib.display_name(input.object), ns, i, pattern, ns],
		),
		"path": ["spec", "destinations", i, "namespace"],
	}
}

# (c) Rendered objects landing in the Argo CD namespace.

violation contains v if {
	input.application.kind == "Application"
	input.context.clusterScoped == false
	[ns, path] := lib.rendered_namespace
	in_argocd_namespace(ns, input.context)

	# lib.rendered, in one step: input.application is an object (it has a
	# kind).
	input.object != input.application
	not lib.object_is_argocd_kind
	v := rendered_violation(ns, path)
}

# in_argocd_namespace is true when ns is the Argo CD namespace of the review
# context (lib.argocd_namespace when context is input.context), else false.
# A pure function: the evaluator keeps its answers across reviews.
in_argocd_namespace(ns, context) if {
	ns == lib.argocd_namespace_of(context)
} else := false

# rendered_violation is the violation of (c) for a rendered object landing
# in namespace ns; path is {"path": ...} when the object names ns itself.
# (Built apart from the rule, whose evaluation then needs fewer variables.)
rendered_violation(ns, path) := object.union(
	{
		"rule": "no-argocd-destination",
		"msg": sprintf(
			"%s of Application %q lands in namespace %q, where Argo CD runs with its repository and cluster credentials; deploy it into a namespace of the team",
			[lib.describe(input.object), lib.application_name, ns],
		),
	},
	path,
)
