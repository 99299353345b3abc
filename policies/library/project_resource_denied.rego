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

# Each clause below states what it needs of input as indexed comparisons
# (the scope, and a resource list of the project that must exist), so the
# rule index skips the clauses that cannot apply: a namespaced object under
# a project without namespace resource lists enters none.

# (a) Cluster-scoped, and the project has no cluster whitelist.
violation contains v if {
	input.application.kind == "Application"
	input.context.clusterScoped == true
	is_object(input.project)
	lib.rendered
	count(lib.project_list(input.project, "clusterResourceWhitelist")) == 0
	v := violation_of(
		sprintf("and AppProject %q has no spec.clusterResourceWhitelist, so it permits no cluster-scoped resources", [lib.project_name]),
		_whitelist_fix,
	)
}

# (b) Cluster-scoped, and not in the project's cluster whitelist.
violation contains v if {
	input.application.kind == "Application"
	input.context.clusterScoped == true
	whitelist := input.project.spec.clusterResourceWhitelist
	lib.rendered
	is_array(whitelist)
	count(whitelist) > 0
	[group, kind] := group_kind
	not lib.resource_in_list(group, kind, whitelist)
	v := violation_of(
		sprintf("that AppProject %q does not list in spec.clusterResourceWhitelist", [lib.project_name]),
		_whitelist_fix,
	)
}

# (c) Cluster-scoped, and in the project's cluster blacklist.
violation contains v if {
	input.application.kind == "Application"
	input.context.clusterScoped == true
	blacklist := input.project.spec.clusterResourceBlacklist
	lib.rendered
	[group, kind] := group_kind
	lib.resource_in_list(group, kind, blacklist)
	v := violation_of(
		sprintf("that AppProject %q blacklists in spec.clusterResourceBlacklist", [lib.project_name]),
		_blacklist_fix,
	)
}

# (d) Namespaced, and in the project's namespace blacklist.
violation contains v if {
	input.application.kind == "Application"
	input.context.clusterScoped == false
	blacklist := input.project.spec.namespaceResourceBlacklist
	lib.rendered
	[group, kind] := group_kind
	lib.resource_in_list(group, kind, blacklist)
	v := violation_of(
		sprintf("that AppProject %q blacklists in spec.namespaceResourceBlacklist", [lib.project_name]),
		_blacklist_fix,
	)
}

# (e) Namespaced, and not in the project's namespace whitelist, when it has
# one (an empty whitelist restricts nothing).
violation contains v if {
	input.application.kind == "Application"
	input.context.clusterScoped == false
	whitelist := input.project.spec.namespaceResourceWhitelist
	lib.rendered
	is_array(whitelist)
	count(whitelist) > 0
	[group, kind] := group_kind
	not lib.resource_in_list(group, kind, whitelist)
	v := violation_of(
		sprintf("that AppProject %q does not list in spec.namespaceResourceWhitelist", [lib.project_name]),
		_whitelist_fix,
	)
}

# group_kind is [group, kind] of input.object; undefined when its kind is
# not a non-empty string or its apiVersion not a string, which no resource
# list can permit or deny. (lib.api_group is a pure function: the evaluator
# keeps its results across reviews.)
group_kind := [lib.api_group(version), kind] if {
	kind := input.object.kind
	is_string(kind)
	kind != ""
	version := input.object.apiVersion
	is_string(version)
}

# violation_of builds the violation, given what the project says about the
# object and how to fix it.
violation_of(what, fix) := {
	"rule": "project-resource-denied",
	"msg": sprintf(
		"%s of Application %q is a %s resource %s %s; %s",
		[
			lib.describe(input.object), lib.application_name, scope,
			lib.describe_group_kind(group_kind[0], group_kind[1]), what, fix,
		],
	),
	"path": ["kind"],
}

scope := "cluster-scoped" if {
	input.context.clusterScoped == true
} else := "namespaced"

_drop := "drop it from the Application or ask the project's owners to"

_whitelist_fix := sprintf("%s whitelist {group: %q, kind: %q}", [_drop, group_kind[0], group_kind[1]])

_blacklist_fix := sprintf("%s lift the blacklist entry", [_drop])
