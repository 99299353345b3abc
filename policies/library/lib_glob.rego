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
#
# Resource lists are not matched with gobwas/glob: Argo CD's isResourceInList
# and isNamedResourceInList use Go's path/filepath.Match (see path_match),
# which has no "{a,b}" alternatives, negates a class with "^" only and has
# no "!" negation of a whole pattern.
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

# path_match is Go's path/filepath.Match(pattern, value) as Argo CD's resource
# lists use it (an error is no match): "*" matches any run of characters but
# "/", "?" one character but "/", "[...]" a class ("[^...]" negated, ranges
# "a-z", "\\" escapes), "\\c" the character c; everything else, "{", "}",
# "," and "!" included, is literal. A malformed pattern (an unclosed or empty
# class, a trailing "\\") matches nothing. Both arguments must be strings. It
# is true or false.
#
# The common patterns ("*", "Cluster*", "*.k8s.io") mean the same to
# filepath.Match and to glob.match with "/" as the delimiter; the others are
# translated to a regular expression.
path_match(pattern, value) := glob.match(pattern, path_delimiters, value) if {
	not regex.match(`[\[\]{}\\]`, pattern)
} else := regex.match(path_pattern_regex(pattern), value) if {
	path_pattern_regex(pattern)
} else := false

# path_pattern_regex translates a filepath.Match pattern into an anchored
# regular expression; undefined when the pattern is malformed.
path_pattern_regex(pattern) := concat("", ["^", concat("", [path_token_regex(t[0]) | some t in tokens]), "$"]) if {
	tokens := regex.find_all_string_submatch_n(`\\.|\[\^?(?:\\.|[^\]\\])+\]|[*?]|[^*?\[\\]+`, pattern, -1)

	# A character no token takes ("[" without its "]", a trailing "\\")
	# makes the pattern malformed.
	concat("", [t[0] | some t in tokens]) == pattern
	count([1 | some t in tokens; path_token_well_formed(t[0])]) == count(tokens)
}

# path_token_well_formed holds for every token but a class that
# filepath.Match rejects: one with a range missing an end ("[-a]", "[a-]").
path_token_well_formed(token) if not startswith(token, "[")

path_token_well_formed(token) if regex.match(`^\[\^?(?:(?:\\.|[^\-\]\\])(?:-(?:\\.|[^\-\]\\]))?)+\]$`, token)

path_token_regex("*") := `[^/]*`

path_token_regex("?") := `[^/]`

path_token_regex(token) := regex_quote_char(substring(token, 1, 1)) if {
	startswith(token, `\`)
}

path_token_regex(token) := concat("", ["[", class_negation(inner), concat("", chars), "]"]) if {
	startswith(token, "[")
	inner := substring(token, 1, count(token) - 2)
	chars := [class_char_regex(c[0]) |
		some c in regex.find_all_string_submatch_n(`\\.|.`, trim_prefix(inner, "^"), -1)
	]
}

class_negation(inner) := "^" if startswith(inner, "^")

else := ""

# class_char_regex translates one character of a class: "\\c" is c itself
# (a "-" so escaped is no range), "-" makes a range, and "[" and "^" are
# themselves.
class_char_regex(c) := regex_quote_char(substring(c, 1, 1)) if {
	startswith(c, `\`)
} else := concat("", [`\`, c]) if {
	c in {"[", "^"}
} else := c

# regex_quote_char escapes one character for a regular expression, inside a
# class or not: punctuation gets a "\\", letters and digits none.
regex_quote_char(c) := c if regex.match(`^[0-9A-Za-z]$`, c)

else := concat("", [`\`, c])

path_token_regex(token) := regex_quote(token) if {
	not startswith(token, "[")
	not startswith(token, `\`)
	not token in {"*", "?"}
}

# regex_quote escapes the characters that are special in a regular
# expression.
regex_quote(s) := regex.replace(s, `[\\.+*?()|\[\]{}^$]`, `\$0`)
