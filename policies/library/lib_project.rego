# AppProject permission checks, written to give the answers Argo CD gives
# (pkg/apis/application/v1alpha1: AppProject.IsSourcePermitted,
# isDestinationMatched, IsGroupKindPermitted), so that tollgate denies what
# Argo CD would refuse to sync and nothing else.
package tollgate.lib

# project_list returns project.spec[field] when it is an array, else [].
project_list(project, field) := list if {
	list := project.spec[field]
	is_array(list)
} else := []

# --- Destinations -----------------------------------------------------------

# project_destinations are input.project's spec.destinations; [] without a
# project or a list.
project_destinations := project_list(input.project, "destinations")

default project_destinations := []

# destination_permitted holds when the spec.destinations entries permit
# dest, an object {"server", "name", "namespace"} of strings ("" when unset).
# As in Argo CD: at least one entry must match, and no entry whose "!"
# pattern rejects dest may exist. An entry matches when its server pattern
# matches dest.server (if set) or its name pattern matches dest.name (if
# set), and its namespace pattern matches dest.namespace. A "!" pattern
# matches every value its target does not, so {server: "*", namespace:
# "!kube-system"} on its own permits every namespace but kube-system.
# Entries that are not objects, and fields that are not strings, match
# nothing.
destination_permitted(entries, dest) if {
	# The common case, in few steps: no "!" pattern in any entry (one look
	# at their JSON text tells), and an entry whose server and namespace
	# globs match.
	dest.server != ""
	not contains(json.marshal(entries), `"!`)
	some entry in entries
	server := entry.server
	is_string(server)
	glob.match(server, null, dest.server)
	namespace := object.get(entry, "namespace", "")
	is_string(namespace)
	glob.match(namespace, null, dest.namespace)
} else if {
	some entry in entries
	destination_entry_matches(entry, dest)
	not destination_denied(entries, dest)
}

# namespace_permitted holds when project's spec.destinations permit app's
# destination cluster with the namespace namespace: the destination of an
# object app renders. It is a pure function of its arguments, which the
# evaluator keeps across reviews, so the objects of one Application cost one
# check per namespace.
namespace_permitted(app, project, namespace) if {
	dest := destination_of(app)
	destination_permitted(
		project_list(project, "destinations"),
		{"server": dest.server, "name": dest.name, "namespace": namespace},
	)
}

# destination_denied holds when one of entries has a "!" pattern that
# rejects dest. Most projects have no "!" pattern at all; one look at the
# JSON text (a string starting with "!") rules that out cheaply.
destination_denied(entries, dest) if {
	contains(json.marshal(entries), `"!`)
	some entry in entries
	not destination_entry_matches(entry, dest)
	deny_entry_rejects(entry, dest)
}

# destination_entry_matches holds when one spec.destinations entry matches
# dest.
destination_entry_matches(entry, dest) if {
	destination_cluster_matches(entry, dest)
	argo_match(object.get(entry, "namespace", ""), dest.namespace, no_delimiters)
}

destination_cluster_matches(entry, dest) if {
	dest.server != ""
	is_object(entry)
	argo_match(object.get(entry, "server", ""), dest.server, no_delimiters)
}

destination_cluster_matches(entry, dest) if {
	dest.name != ""
	is_object(entry)
	argo_match(object.get(entry, "name", ""), dest.name, no_delimiters)
}

# deny_entry_rejects mirrors the else-branch of Argo CD's
# isDestinationMatched: an entry that did not match rejects dest when one of
# its "!" patterns did not match. (Argo CD resolves a destination name to its
# server before this check; offline we cannot, so an entry with a "!server"
# pattern also rejects a destination given by name only.)
deny_entry_rejects(entry, dest) if {
	some field in ["server", "name"]
	pattern := str(entry, field)
	is_deny_pattern(pattern)
	not matches_if_set(pattern, dest[field])
}

deny_entry_rejects(entry, dest) if {
	pattern := str(entry, "namespace")
	is_deny_pattern(pattern)
	not argo_match(pattern, dest.namespace, no_delimiters)
}

matches_if_set(pattern, value) if {
	value != ""
	argo_match(pattern, value, no_delimiters)
}

# describe_destination names a destination for a message:
# `server "https://kubernetes.default.svc", namespace "web"`.
describe_destination(dest) := concat(", ", array.concat(cluster, [sprintf("namespace %q", [dest.namespace])])) if {
	cluster := [sprintf("%s %q", [field, dest[field]]) |
		some field in ["server", "name"]
		dest[field] != ""
	]
	count(cluster) > 0
} else := sprintf("no server or name, namespace %q", [dest.namespace])

# --- Source repositories ----------------------------------------------------

# project_source_patterns are input.project's spec.sourceRepos, normalized
# (see source_patterns), computed once per review; [] without a project.
default project_source_patterns := []

project_source_patterns := source_patterns(input.project)

# source_permitted holds when patterns, normalized spec.sourceRepos entries
# (see source_patterns), permit repo, as
# Argo CD decides it: URLs and patterns are normalized alike (see
# normalize_repo); some pattern must match (a "!" pattern matches every URL
# its target does not) and no "!" pattern may reject the URL. Patterns use
# "/" as the delimiter: "https://github.com/org/*" matches repositories
# directly under org, "https://github.com/org/**" any depth, "*" everything.
source_permitted(patterns, repo) if {
	url := normalize_repo(repo)
	some pattern in patterns
	argo_match(pattern, url, path_delimiters)
	not source_denied(patterns, url)
}

source_denied(patterns, url) if {
	some pattern in patterns
	is_deny_pattern(pattern)
	not argo_match(pattern, url, path_delimiters)
}

# source_patterns returns project's spec.sourceRepos, normalized.
source_patterns(project) := [normalize_repo_pattern(p) |
	some p in project_list(project, "sourceRepos")
	is_string(p)
]

normalize_repo_pattern(pattern) := concat("", ["!", normalize_repo(deny_target(pattern))]) if {
	is_deny_pattern(pattern)
} else := normalize_repo(pattern)

# normalize_repo normalizes a Git URL the way Argo CD's git.NormalizeGitURL
# does: trim spaces, lowercase, turn the scp form "git@host:org/repo" into
# "git@host/org/repo", drop one trailing ".git" and a leading "ssh://". So
# "ssh://git@GitHub.com/org/repo.git" and "git@github.com:org/repo" compare
# equal. A trailing "/" is kept, as Argo CD keeps it.
normalize_repo(url) := trim_prefix(trim_suffix(scp_to_path(lower(trim_space(url))), ".git"), "ssh://")

scp_to_path(url) := concat("/", [substring(url, 0, i), substring(url, i + 1, -1)]) if {
	regex.match(`^[^/:]*@[^@]+$`, url)
	i := indexof(url, ":")
	i >= 0
} else := url

# --- Resource kinds ---------------------------------------------------------

# resource_in_list holds when a {group, kind} entry of list matches group
# and kind (globs, as Argo CD's isResourceInList; a missing group is the
# core group ""). Entries that are not objects, and patterns that are not
# strings, match nothing; a list that is not an array holds no entries.
resource_in_list(group, kind, list) if {
	is_array(list)
	some entry in list
	kind_pattern := entry.kind
	is_string(kind_pattern)
	glob.match(kind_pattern, null, kind)
	group_pattern := object.get(entry, "group", "")
	is_string(group_pattern)
	glob.match(group_pattern, null, group)
}
