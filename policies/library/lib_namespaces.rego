# Namespaces that AppProjects must not open: helpers shared by
# no-argocd-destination and protected-namespace.
package tollgate.lib

# entries_permitting_namespace returns the indexes of project's allow
# entries (no "!" pattern) in spec.destinations whose namespace pattern
# matches ns and that no deny entry takes ns back from: a deny entry whose
# "!" namespace pattern rejects ns and whose server or name pattern is "*"
# or the allow entry's own. A deny entry never permits. A pure function of
# its arguments: the evaluator keeps its answers across reviews.
entries_permitting_namespace(project, ns) := {i |
	entries := project_list(project, "destinations")
	some i, entry in entries
	not is_deny_entry(entry)
	argo_match(str(entry, "namespace"), ns, no_delimiters)
	not namespace_taken_back(entries, entry, ns)
}

# namespace_taken_back holds when a deny entry of entries rejects namespace
# ns on every cluster the allow entry entry names.
namespace_taken_back(entries, entry, ns) if {
	some deny in entries
	pattern := str(deny, "namespace")
	is_deny_pattern(pattern)
	not argo_match(pattern, ns, no_delimiters)
	some field in ["server", "name"]
	cluster := str(deny, field)
	cluster in {"*", str(entry, field)}
	cluster != ""
}

# protected_namespaces are the namespaces the operator protects
# (input.context.protectedNamespaces); [] when the caller did not say.
default protected_namespaces := []

protected_namespaces := ns if {
	ns := input.context.protectedNamespaces
	is_array(ns)
}

# is_protected is true when ns is one of the protected namespaces the
# review context names, else false. A pure function: the evaluator keeps
# its answers across reviews.
is_protected(ns, context) if {
	ns != ""
	ns in context.protectedNamespaces
} else := false
