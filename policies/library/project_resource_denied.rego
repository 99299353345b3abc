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
#
# What the project's lists say about a kind comes from pure functions of
# the object's kind and apiVersion (whitelist_denies, listed), whose results
# the evaluator keeps across reviews; group_kind, for the message, is only
# computed for a violation. In a clause, input.application.kind ==
# "Application" makes input.application an object, so `input.object !=
# input.application` is lib.rendered, in one step.

# (a) Cluster-scoped, and the project has no cluster whitelist.
violation contains v if {
	input.application.kind == "Application"
	input.context.clusterScoped == true
	is_object(input.project)
	input.object != input.application
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
	input.object != input.application
	whitelist_denies(input.object.kind, input.object.apiVersion, whitelist)
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
	input.object != input.application
	listed(input.object.kind, input.object.apiVersion, blacklist)
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
	input.object != input.application
	listed(input.object.kind, input.object.apiVersion, blacklist)
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
	input.object != input.application
	whitelist_denies(input.object.kind, input.object.apiVersion, whitelist)
	v := violation_of(
		sprintf("that AppProject %q does not list in spec.namespaceResourceWhitelist", [lib.project_name]),
		_whitelist_fix,
	)
}

# whitelist_denies is true when whitelist, a resource whitelist of the
# project, is a non-empty array and no entry of it matches an object of kind
# kind and apiVersion version (see group_kind_of), else false: every answer,
# the common "permitted" too, is a value the evaluator can keep.
whitelist_denies(kind, version, whitelist) if {
	is_array(whitelist)
	count(whitelist) > 0
	[group, k] := group_kind_of(kind, version)
	not lib.resource_in_list(group, k, whitelist)
} else := false

# listed is true when an entry of list, a resource list of the project,
# matches an object of kind kind and apiVersion version (see
# group_kind_of), else false.
listed(kind, version, list) if {
	[group, k] := group_kind_of(kind, version)
	lib.resource_in_list(group, k, list)
} else := false

# group_kind is [group, kind] of input.object; undefined when its kind is
# not a non-empty string or its apiVersion not a string, which no resource
# list can permit or deny.
group_kind := group_kind_of(input.object.kind, input.object.apiVersion)

# group_kind_of returns [group, kind] for a kind and an apiVersion, as
# group_kind describes.
group_kind_of(kind, version) := [lib.api_group(version), kind] if {
	is_string(kind)
	kind != ""
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
