# protected-namespace: nothing deploys into tollgate's own namespace or the
# control plane's.
#
# What: (a) an Application whose spec.destination.namespace is protected;
# (b) an AppProject whose spec.destinations permit a protected namespace
# (an entry whose namespace pattern matches it, such as "*" or "kube-*", or
# a "!" entry for some other namespace, with no "!" entry rejecting it);
# (c) a namespaced object rendered by an Application that lands in a
# protected namespace (its metadata.namespace or, when empty, the
# Application's destination namespace); (d) a Namespace object named like a
# protected namespace that an Application renders. The protected namespaces
# come from the operator's configuration (input.context.protectedNamespaces;
# by default tollgate's own namespace, kube-system, kube-public and
# kube-node-lease).
# Why: tollgate's controller runs in its namespace with a ServiceAccount
# bound to cluster-admin, and the control plane's namespaces hold the
# cluster's own credentials: a Pod there that mounts one owns the cluster.
# The admission webhook never intercepts these namespaces (a broken webhook
# must not lock them), so the sync gate and `tollgate test` enforce this.
# Fix: deploy into a namespace of the team; in AppProjects, add "!" entries
# for the protected namespaces or narrow the namespace patterns.
package tollgate.builtin.protected_namespace

import data.tollgate.lib

# (a) Applications deploying into a protected namespace.

violation contains v if {
	input.object.kind == "Application"
	startswith(input.object.apiVersion, "argoproj.io/")
	dest := lib.destination_of(input.object)
	lib.is_protected(dest.namespace, input.context)
	v := {
		"rule": "protected-namespace",
		"msg": sprintf(
			"Application %q deploys into the protected namespace %q; set spec.destination.namespace to a namespace of the team",
			[lib.display_name(input.object), dest.namespace],
		),
		"path": ["spec", "destination", "namespace"],
	}
}

# (b) AppProjects permitting a protected namespace: one violation per
# spec.destinations entry that lets protected namespaces in.

violation contains v if {
	input.object.kind == "AppProject"
	startswith(input.object.apiVersion, "argoproj.io/")
	some i, namespaces in permitted_protected_namespaces
	pattern := lib.str(input.object.spec.destinations[i], "namespace")
	v := {
		"rule": "protected-namespace",
		"msg": sprintf(
			"AppProject %q permits the protected namespace(s) %s through spec.destinations[%d] (namespace %q); add a \"!\" entry such as {server: \"*\", namespace: \"!%s\"} for each to spec.destinations or narrow the namespace pattern",
			[lib.display_name(input.object), concat(", ", [sprintf("%q", [ns]) | some ns in namespaces]), i, pattern, namespaces[0]],
		),
		"path": ["spec", "destinations", i, "namespace"],
	}
}

# permitted_protected_namespaces maps the index of each spec.destinations
# entry of the AppProject under review to the protected namespaces it
# permits, in the configured order.
permitted_protected_namespaces[i] := namespaces if {
	some ns in lib.protected_namespaces
	some i in lib.entries_permitting_namespace(input.object, ns)
	namespaces := [n |
		some n in lib.protected_namespaces
		i in lib.entries_permitting_namespace(input.object, n)
	]
}

# (c) Rendered objects landing in a protected namespace.

violation contains v if {
	input.application.kind == "Application"
	input.context.clusterScoped == false
	[ns, path] := lib.rendered_namespace
	lib.is_protected(ns, input.context)
	input.object != input.application
	v := object.union(
		{
			"rule": "protected-namespace",
			"msg": sprintf(
				"%s of Application %q lands in the protected namespace %q; deploy it into a namespace of the team",
				[lib.describe(input.object), lib.application_name, ns],
			),
		},
		path,
	)
}

# (d) Rendered Namespaces named like a protected namespace.

violation contains v if {
	input.object.kind == "Namespace"
	input.object.apiVersion == "v1"
	input.application.kind == "Application"
	lib.is_protected(lib.name_of(input.object), input.context)
	v := {
		"rule": "protected-namespace",
		"msg": sprintf(
			"Application %q renders the protected Namespace %q; leave it to the cluster's operators",
			[lib.application_name, lib.name_of(input.object)],
		),
		"path": ["metadata", "name"],
	}
}
