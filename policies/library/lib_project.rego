# AppProject permission checks, written to give the answers Argo CD gives
# (pkg/apis/application/v1alpha1: AppProject.IsSourcePermitted,
# isDestinationMatched, IsGroupKindNamePermitted), so that tollgate denies
# what Argo CD would refuse to sync and nothing else. Where Argo CD permits
# what its documentation says a "!" pattern denies (a deny pattern or entry
# that permits on its own, a namespace deny in an entry given by cluster
# name), tollgate follows the documentation; docs/policies.md lists those
# differences.
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
# dest, an object {"server", "name", "namespace"} of strings ("" when unset),
# as Argo CD's isDestinationMatched decides it and its documentation states
# it: some allow entry (one without a "!" pattern) must match dest and no
# deny entry (one with a "!" pattern) may reject it.
#
# An entry matches when its server pattern matches dest.server (if set) or
# its name pattern matches dest.name (if set), and its namespace pattern
# matches dest.namespace; a "!" pattern matches every value its target does
# not. A deny entry that does not match rejects dest in the part of the
# destinations the rest of the entry matches (deny_entry_rejects): {server:
# "!https://prod", namespace: "kube-system"} keeps every cluster but prod
# out of kube-system and says nothing about other namespaces.
#
# Argo CD also lets a deny entry that matches permit (a project with only
# {server: "*", namespace: "!kube-system"} permits every other namespace);
# its documentation says only allow entries permit, and so does tollgate.
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
	not is_deny_entry(entry)
	destination_entry_matches(entry, dest)
	not destination_denied(entries, dest)
}

# namespace_permitted holds when project's spec.destinations permit app's
# destination cluster with the namespace namespace: the destination of an
# object app renders. It is a pure function of its arguments, which the
# evaluator keeps across reviews, so the objects of one Application cost one
# check per namespace.
namespace_permitted(app, project, namespace) if {
	dest := resolved_destination(destination_of(app))
	destination_permitted(
		project_list(project, "destinations"),
		{"server": dest.server, "name": dest.name, "namespace": namespace},
	)
}

# destination_denied holds when a deny entry of entries rejects dest. Most
# projects have no "!" pattern at all; one look at the JSON text (a string
# starting with "!") rules that out cheaply.
destination_denied(entries, dest) if {
	contains(json.marshal(entries), `"!`)
	some entry in entries
	deny_entry_rejects(entry, dest)
}

# is_deny_entry holds for a spec.destinations entry with a "!" pattern.
is_deny_entry(entry) if {
	some field in ["server", "name", "namespace"]
	is_deny_pattern(str(entry, field))
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

# deny_entry_rejects mirrors the deny cases of Argo CD's
# isDestinationMatched: an entry that does not match dest rejects it when
#
#   - its "!" server or name pattern rejects dest's server or name and its
#     namespace pattern matches dest's namespace, or
#   - its "!" namespace pattern rejects dest's namespace and its cluster
#     (server or name) pattern matches dest's cluster.
#
# So {server: "!https://prod", namespace: "!kube-system"} rejects prod
# outside kube-system and kube-system outside prod, as in Argo CD; prod's
# kube-system is left to the other entries.
#
# Argo CD resolves a destination's cluster, so it knows both the server and
# the name; offline only the half the Application sets is known. A pattern
# for the other half is taken as possibly rejecting and as possibly in
# scope: an entry with a "!" name pattern rejects a destination given by
# server (in the namespaces its namespace pattern matches), and {server:
# "*", namespace: "!kube-system"} keeps kube-system out of a destination
# given by name.
deny_entry_rejects(entry, dest) if {
	some field in ["server", "name"]
	pattern := str(entry, field)
	is_deny_pattern(pattern)
	not matches_if_set(pattern, dest[field])
	argo_match(object.get(entry, "namespace", ""), dest.namespace, no_delimiters)
	not destination_entry_matches(entry, dest)
}

deny_entry_rejects(entry, dest) if {
	pattern := str(entry, "namespace")
	is_deny_pattern(pattern)
	not argo_match(pattern, dest.namespace, no_delimiters)
	deny_scope_includes_cluster(entry, dest)
}

# deny_scope_includes_cluster holds when entry's server or name pattern
# matches dest's cluster, or may match the half of it that dest leaves
# unset.
deny_scope_includes_cluster(entry, dest) if {
	destination_cluster_matches(entry, dest)
}

deny_scope_includes_cluster(entry, dest) if {
	some field in ["server", "name"]
	dest[field] == ""
	str(entry, field) != ""
}

matches_if_set(pattern, value) if {
	value != ""
	argo_match(pattern, value, no_delimiters)
}

# resolved_destination is dest as a project's destinations are matched
# against it: Argo CD resolves a destination given by name to its cluster's
# server before it checks the project, so the name "in-cluster" (Argo CD's
# own cluster) also matches entries by server,
# https://kubernetes.default.svc. Other names match by name only (tollgate
# judges the Application as written, without the cluster Secrets).
resolved_destination(dest) := object.union(dest, {"server": "https://kubernetes.default.svc"}) if {
	dest.server == ""
	dest.name == "in-cluster"
} else := dest

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
# (see source_patterns), permit repo, as Argo CD's IsSourcePermitted decides
# it and its documentation states it: URLs and patterns are normalized alike
# (see normalize_repo); some allow pattern (one without a leading "!") must
# match the URL and no "!" pattern may reject it (match it with its "!"
# removed). Patterns use "/" as the delimiter: "https://github.com/org/*"
# matches repositories directly under org, "https://github.com/org/**" any
# depth, "*" everything.
#
# Argo CD also lets a "!" pattern that does not reject the URL permit it (a
# project with only "!https://github.com/evil/*" permits every other
# repository); its documentation says only allow patterns permit, and so
# does tollgate.
source_permitted(patterns, repo) if {
	url := normalize_repo(repo)
	some pattern in patterns
	not is_deny_pattern(pattern)
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
# "ssh://git@host/org/repo", drop one trailing ".git", pass the result
# through Go's url.Parse and String (see url_string) and drop a leading
# "ssh://". So "ssh://git@GitHub.com/org/repo.git" and
# "git@github.com:org/repo" compare equal. A trailing "/" is kept, as Argo
# CD keeps it.
normalize_repo(url) := trim_prefix(url_string(trim_suffix(ssh_form(lower(trim_space(url))), ".git")), "ssh://")

# ssh_form rewrites an SSH URL in scp form (user@host:path) as an ssh:// URL,
# as git.NormalizeGitURL does before parsing it.
ssh_form(url) := concat("", ["ssh://", replace_first(url, ":", "/")]) if {
	regex.match(`^([^/:]*?)@[^@]+$`, url)
} else := url

replace_first(s, old, new) := concat(new, [substring(s, 0, i), substring(s, i + count(old), -1)]) if {
	i := indexof(s, old)
	i >= 0
} else := s

# url_string is Go's url.Parse(u).String() where it changes a repository
# URL or pattern: an authority with a character a host or user name cannot
# have (say "{") makes Parse fail, and NormalizeGitURL then returns ""; a
# path with a character Go does not leave as it is ("{", "}", a space, "^")
# is escaped whole, "*", "!" and "[" included ("/org/{a,b}/*" becomes
# "/org/%7Ba,b%7D/%2A"), so such a pattern matches no repository and such a
# "!" pattern rejects none. Other URLs come back as they are.
url_string(u) := u if {
	not regex.match(`[^a-z0-9\-._~!$&'()*+,;=:@\[\]/%?#]`, u)
} else := concat("", [parts[1], parts[2], escaped_path(parts[3]), parts[4]]) if {
	parts := regex.find_all_string_submatch_n(`^((?:[a-z][a-z0-9+.\-]*:)?)((?://[^/?#]*)?)([^?#]*)(.*)$`, u, 1)[0]
	not regex.match(`[^a-z0-9\-._~!$&'()*+,;=:\[\]<>"%@/]`, parts[2])
} else := ""

# escaped_path is url.URL's EscapedPath for a path: the path itself when
# every character may stand in an escaped path, else the path with every
# character but letters, digits and -._~$&+,/:;=@ percent-encoded ("%xx"
# escapes kept).
escaped_path(p) := p if {
	not regex.match(`[^a-z0-9\-._~!$&'()*+,;=:@\[\]%/]`, p)
} else := concat("", [path_char_escaped(c[0]) | some c in regex.find_all_string_submatch_n(`%[0-9a-f]{2}|.`, p, -1)])

path_char_escaped(c) := c if {
	regex.match(`^(?:%..|[a-z0-9\-._~$&+,/:;=@])$`, c)
} else := concat("", [concat("", ["%", upper(substring(h, 2 * i, 2))]) |
	h := hex.encode(c)
	some i in numbers.range(0, (count(h) / 2) - 1)
])

# --- Resource kinds ---------------------------------------------------------

# resource_in_list holds when a {group, kind} entry of list matches group
# and kind, as Argo CD's isResourceInList decides it: the patterns are
# matched with Go's filepath.Match (see path_match: "*", "?" and classes,
# but no "{a,b}"), a missing group is the core group "". An entry's name is
# not read: Argo CD's namespaced resource lists hold group and kind only.
# Entries that are not objects, and patterns that are not strings, match
# nothing; a list that is not an array holds no entries.
resource_in_list(group, kind, list) if {
	is_array(list)
	some entry in list
	group_kind_entry_matches(entry, group, kind)
}

# named_resource_in_list holds when an entry of list, a cluster resource
# list, matches group, kind and the object name name, as Argo CD's
# isNamedResourceInList decides it: group and kind as in resource_in_list,
# and the entry's name pattern (filepath.Match), when it has one, must match
# name. An entry without a name, or with "", matches every name.
named_resource_in_list(group, kind, name, list) if {
	is_array(list)
	some entry in list
	group_kind_entry_matches(entry, group, kind)
	entry_name_matches(entry, name)
}

group_kind_entry_matches(entry, group, kind) if {
	kind_pattern := entry.kind
	is_string(kind_pattern)
	path_match(kind_pattern, kind)
	group_pattern := object.get(entry, "group", "")
	is_string(group_pattern)
	path_match(group_pattern, group)
}

entry_name_matches(entry, _) if object.get(entry, "name", "") in {"", null}

entry_name_matches(entry, name) if {
	pattern := entry.name
	is_string(pattern)
	pattern != ""
	path_match(pattern, name)
}
