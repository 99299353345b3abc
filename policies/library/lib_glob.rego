# Glob matching with Argo CD's semantics.
#
# Argo CD matches AppProject patterns with github.com/gobwas/glob, the same
# library behind OPA's glob.match: "*" matches any run of characters, "?" one
# character, "[...]" a class, "{a,b}" alternatives. Two details matter:
#
#   - glob.match(p, [], v) is NOT "no delimiters": OPA then defaults to ["."].
#     Namespaces, cluster names, servers, groups and kinds are matched with
#     null (no delimiters), so "*" also crosses "." and "/".
#   - Source repositories are matched with "/" as the delimiter, as Argo CD's
#     AppProject.IsSourcePermitted does: "*" stays within one path segment,
#     "**" crosses segments, and the pattern "*" alone matches every repo.
#
# A leading "!" negates a pattern (deny entries). As in Argo CD, an invalid
# pattern (say an unclosed "[") matches nothing and its "!" form matches
# everything; this relies on glob.match being undefined on a compile error,
# which holds unless the evaluator turns on strict builtin errors.
package tollgate.lib

# no_delimiters makes "*" match any run of characters.
no_delimiters := null

# path_delimiters makes "*" stop at "/" (source repository URLs).
path_delimiters := ["/"]

# glob_match reports whether value matches pattern, "*" crossing everything.
# Both arguments must be strings (see str).
glob_match(pattern, value) if glob.match(pattern, null, value)

# is_deny_pattern holds for a pattern with a leading "!".
is_deny_pattern(pattern) if startswith(pattern, "!")

# deny_target returns a deny pattern without its leading "!".
deny_target(pattern) := substring(pattern, 1, -1)

# argo_match is Argo CD's globMatch(pattern, value, allowNegation=true,
# delimiters...): a "!" pattern matches every value its target does not
# match; "*" matches every value, delimiters or not. A pattern that is not
# a string matches nothing; value must be a string. It is true or false (an
# else chain, so that one call settles it).
argo_match(pattern, value, delimiters) if {
	pattern == "*"
} else := false if {
	not is_string(pattern)
} else := matched if {
	is_deny_pattern(pattern)
	matched := glob.match(deny_target(pattern), delimiters, value) == false
} else if {
	# The target did not compile, so it matches nothing.
	is_deny_pattern(pattern)
} else := glob.match(pattern, delimiters, value)
