# project-resource-denied: an Application renders only the resource kinds
# its AppProject permits.
#
# What: an object rendered by an Application (not the Application itself)
# whose group and kind the AppProject does not permit, with Argo CD's rules.
# Cluster-scoped: permitted when it matches a spec.clusterResourceWhitelist
# entry and no spec.clusterResourceBlacklist entry; a project without a
# cluster whitelist permits no cluster-scoped resource. Namespaced: denied
# when it matches a spec.namespaceResourceBlacklist entry, or when
# spec.namespaceResourceWhitelist is non-empty and it matches no entry.
# Entries are {group, kind} globs; the core group is "".
# Why: Argo CD refuses to sync the object ("resource ... is not permitted in
# project ..."); project resource lists are how a platform team keeps, say,
# ClusterRoles or NetworkPolicies out of a team's hands.
# Fix: drop the object from the Application, or have the project's owners
# permit the kind in the project's resource lists.
#
# Skipped when the AppProject is unknown (see project-not-found).
package tollgate.builtin.project_resource_denied

import data.tollgate.lib

violation contains v if {
	input.application.kind == "Application"
	lib.rendered
	lib.has_project
	lib.non_empty_string(kind)
	some problem in problems
	v := {
		"rule": "project-resource-denied",
		"msg": sprintf(
			"%s of Application %q is a %s resource %s %s; %s",
			[
				lib.describe(input.object), lib.application_name, scope,
				lib.describe_group_kind(group, kind), problem.what, problem.fix,
			],
		),
		"path": ["kind"],
	}
}

kind := input.object.kind

group := lib.object_group

cluster_scoped if input.context.clusterScoped == true

scope := "cluster-scoped" if {
	cluster_scoped
} else := "namespaced"

_drop := "drop it from the Application or ask the project's owners to"

_whitelist_fix := sprintf("%s whitelist {group: %q, kind: %q}", [_drop, group, kind])

_blacklist_fix := sprintf("%s lift the blacklist entry", [_drop])

# problems says why the project rejects the object, as {"what", "fix"}
# objects; empty when it permits it. The cluster-scoped clauses start with
# a comparison OPA's rule index can use, so namespaced objects skip them.
problems contains {
	"what": sprintf("and AppProject %q has no spec.clusterResourceWhitelist, so it permits no cluster-scoped resources", [lib.project_name]),
	"fix": _whitelist_fix,
} if {
	input.context.clusterScoped == true
	count(lib.project_list(input.project, "clusterResourceWhitelist")) == 0
}

problems contains {
	"what": sprintf("that AppProject %q does not list in spec.clusterResourceWhitelist", [lib.project_name]),
	"fix": _whitelist_fix,
} if {
	input.context.clusterScoped == true
	whitelist := lib.project_list(input.project, "clusterResourceWhitelist")
	count(whitelist) > 0
	not lib.resource_in_list(group, kind, whitelist)
}

problems contains {
	"what": sprintf("that AppProject %q blacklists in spec.clusterResourceBlacklist", [lib.project_name]),
	"fix": _blacklist_fix,
} if {
	input.context.clusterScoped == true
	lib.resource_in_list(group, kind, lib.project_list(input.project, "clusterResourceBlacklist"))
}

problems contains {
	"what": sprintf("that AppProject %q blacklists in spec.namespaceResourceBlacklist", [lib.project_name]),
	"fix": _blacklist_fix,
} if {
	not cluster_scoped
	lib.resource_in_list(group, kind, lib.project_list(input.project, "namespaceResourceBlacklist"))
}

problems contains {
	"what": sprintf("that AppProject %q does not list in spec.namespaceResourceWhitelist", [lib.project_name]),
	"fix": _whitelist_fix,
} if {
	not cluster_scoped
	whitelist := lib.project_list(input.project, "namespaceResourceWhitelist")
	count(whitelist) > 0
	not lib.resource_in_list(group, kind, whitelist)
}
