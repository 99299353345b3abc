# project-resource-denied: an Application renders only the resource kinds
# its AppProject permits.
#
# What: an object rendered by an Application (not the Application itself)
# that the AppProject's resource lists do not permit, with the rules of
# Argo CD's IsGroupKindNamePermitted. Cluster-scoped: permitted when it
# matches a spec.clusterResourceWhitelist entry and no
# spec.clusterResourceBlacklist entry; a project without a cluster
# whitelist, or with an empty one, permits no cluster-scoped resource.
# Namespaced: permitted when it matches no spec.namespaceResourceBlacklist
# entry and, if the project has a spec.namespaceResourceWhitelist, one of
# its entries: without the field every namespaced kind is permitted, an
# empty list ([]) permits none. Entries are {group, kind} patterns matched
# as Go's filepath.Match does ("*", "?", "[...]", no "{a,b}"); the core
# group is "". Cluster list entries may also have a name pattern, matched
# against the object's metadata.name (Argo CD 3.x); an entry without one
# matches every name. Namespaced list entries have no name in Argo CD, so a
# name there is ignored.
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
# the object's kind and apiVersion, and for the cluster lists its name
# (cluster_whitelist_denies, namespace_whitelist_denies, listed,
# named_listed), whose results the evaluator keeps across reviews; group_kind, for the message, is only
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
	cluster_whitelist_denies(input.object.kind, input.object.apiVersion, lib.name_of(input.object), whitelist)
	v := cluster_whitelist_violation(whitelist)
}

# (c) Cluster-scoped, and in the project's cluster blacklist.
violation contains v if {
	input.application.kind == "Application"
	input.context.clusterScoped == true
	blacklist := input.project.spec.clusterResourceBlacklist
	input.object != input.application
	named_listed(input.object.kind, input.object.apiVersion, lib.name_of(input.object), blacklist)
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
# one (an empty whitelist permits nothing, a missing one everything).
violation contains v if {
	input.application.kind == "Application"
	input.context.clusterScoped == false
	whitelist := input.project.spec.namespaceResourceWhitelist
	input.object != input.application
	namespace_whitelist_denies(input.object.kind, input.object.apiVersion, whitelist)
	v := namespace_whitelist_violation(whitelist)
}

# cluster_whitelist_denies is true when whitelist, the project's cluster
# whitelist, is a non-empty array (rule (a) reports an empty one) and no
# entry of it matches an object of kind kind, apiVersion version and name
# name (see group_kind_of), else false: every answer, the common "permitted"
# too, is a value the evaluator can keep.
cluster_whitelist_denies(kind, version, name, whitelist) if {
	is_array(whitelist)
	count(whitelist) > 0
	[group, k] := group_kind_of(kind, version)
	not lib.named_resource_in_list(group, k, name, whitelist)
} else := false

# namespace_whitelist_denies is true when whitelist, the project's namespace
# whitelist, is an array (empty too) and no entry of it matches an object
# of kind kind and apiVersion version, else false. A missing whitelist (or
# null, as a typed client writes a nil list) restricts nothing.
namespace_whitelist_denies(kind, version, whitelist) if {
	is_array(whitelist)
	[group, k] := group_kind_of(kind, version)
	not lib.resource_in_list(group, k, whitelist)
} else := false

# listed is true when an entry of list, a namespaced resource list of the
# project, matches an object of kind kind and apiVersion version (see
# group_kind_of), else false.
listed(kind, version, list) if {
	[group, k] := group_kind_of(kind, version)
	lib.resource_in_list(group, k, list)
} else := false

# named_listed is true when an entry of list, a cluster resource list of the
# project, matches an object of kind kind, apiVersion version and name
# name, else false.
named_listed(kind, version, name, list) if {
	[group, k] := group_kind_of(kind, version)
	lib.named_resource_in_list(group, k, name, list)
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

# cluster_whitelist_violation is the violation of (b): the whitelist may
# list the kind for other names only.
cluster_whitelist_violation(whitelist) := violation_of(
	sprintf("that AppProject %q lists in spec.clusterResourceWhitelist for other names only", [lib.project_name]),
	sprintf("%s whitelist {group: %q, kind: %q, name: %q}", [_drop, group_kind[0], group_kind[1], lib.name_of(input.object)]),
) if {
	lib.resource_in_list(group_kind[0], group_kind[1], whitelist)
} else := violation_of(
	sprintf("that AppProject %q does not list in spec.clusterResourceWhitelist", [lib.project_name]),
	_whitelist_fix,
)

# namespace_whitelist_violation is the violation of (e).
namespace_whitelist_violation(whitelist) := violation_of(
	sprintf("and AppProject %q has an empty spec.namespaceResourceWhitelist, so it permits no namespaced resources (without the field it would permit all)", [lib.project_name]),
	_whitelist_fix,
) if {
	count(whitelist) == 0
} else := violation_of(
	sprintf("that AppProject %q does not list in spec.namespaceResourceWhitelist", [lib.project_name]),
	_whitelist_fix,
)

_drop := "drop it from the Application or ask the project's owners to"

_whitelist_fix := sprintf("%s whitelist {group: %q, kind: %q}", [_drop, group_kind[0], group_kind[1]])

_blacklist_fix := sprintf("%s lift the blacklist entry", [_drop])
