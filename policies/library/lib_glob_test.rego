package tollgate.lib_test

import data.tollgate.lib

test_glob_match[note] if {
	some note, c in {
		"star matches all": {"pattern": "*", "value": "a.b/c", "want": true},
		"star matches empty": {"pattern": "*", "value": "", "want": true},
		"star crosses dots": {"pattern": "https://*.example.com", "value": "https://a.b.example.com", "want": true},
		"prefix": {"pattern": "argo*", "value": "argocd", "want": true},
		"question mark": {"pattern": "argo?d", "value": "argocd", "want": true},
		"class": {"pattern": "team-[ab]", "value": "team-b", "want": true},
		"alternatives": {"pattern": "{shop,billing}", "value": "billing", "want": true},
		"no match": {"pattern": "argo*", "value": "kube-system", "want": false},
		"anchored": {"pattern": "argo", "value": "argocd", "want": false},
		"empty pattern": {"pattern": "", "value": "x", "want": false},
		"empty both": {"pattern": "", "value": "", "want": true},
	}
	matched := count({1 | lib.glob_match(c.pattern, c.value)}) == 1
	matched == c.want
}

test_argo_match[note] if {
	some note, c in {
		"plain": {"pattern": "shop", "value": "shop", "want": true},
		"negation rejects its target": {"pattern": "!kube-*", "value": "kube-system", "want": false},
		"negation admits the rest": {"pattern": "!kube-*", "value": "shop", "want": true},
		"negated star": {"pattern": "!*", "value": "shop", "want": false},
		"star": {"pattern": "*", "value": "a/b/c", "want": true},
	}
	matched := count({1 | lib.argo_match(c.pattern, c.value, lib.no_delimiters)}) == 1
	matched == c.want
}

test_argo_match_with_path_delimiters[note] if {
	some note, c in {
		"star in one segment": {"pattern": "https://github.com/org/*", "value": "https://github.com/org/shop", "want": true},
		"star stops at slash": {"pattern": "https://github.com/org/*", "value": "https://github.com/org/group/shop", "want": false},
		"double star crosses": {"pattern": "https://github.com/org/**", "value": "https://github.com/org/group/shop", "want": true},
		"lone star crosses": {"pattern": "*", "value": "https://github.com/org/group/shop", "want": true},
		# As in Argo CD, only the plain "*" is special: "!*" negates a "*"
		# that stops at "/", so it rejects nothing that contains a "/".
		"negated lone star": {"pattern": "!*", "value": "https://github.com/org/shop", "want": true},
		"negated lone star on one segment": {"pattern": "!*", "value": "shop", "want": false},
	}
	matched := count({1 | lib.argo_match(c.pattern, c.value, lib.path_delimiters)}) == 1
	matched == c.want
}

test_deny_pattern if {
	lib.is_deny_pattern("!argocd")
	not lib.is_deny_pattern("argocd")
	lib.deny_target("!argo*") == "argo*"
}

# path_match is Go's filepath.Match, which Argo CD's resource lists use.
test_path_match[note] if {
	some note, c in {
		"star": {"pattern": "*", "value": "Secret", "want": true},
		"star matches empty": {"pattern": "*", "value": "", "want": true},
		"star stops at slash": {"pattern": "*", "value": "a/b", "want": false},
		"prefix": {"pattern": "Cluster*", "value": "ClusterRole", "want": true},
		"suffix with dots": {"pattern": "*.k8s.io", "value": "rbac.authorization.k8s.io", "want": true},
		"question mark": {"pattern": "Secre?", "value": "Secret", "want": true},
		"anchored": {"pattern": "Role", "value": "RoleBinding", "want": false},
		"braces are literal": {"pattern": "{Role,RoleBinding}", "value": "Role", "want": false},
		"braces match themselves": {"pattern": "{Role,RoleBinding}", "value": "{Role,RoleBinding}", "want": true},
		"class": {"pattern": "[RC]ole", "value": "Role", "want": true},
		"range": {"pattern": "team[0-9]-*", "value": "team1-web", "want": true},
		"caret negates a class": {"pattern": "[^R]ole", "value": "Role", "want": false},
		"caret negation admits the rest": {"pattern": "[^R]ole", "value": "Pole", "want": true},
		"bang is literal in a class": {"pattern": "[!R]ole", "value": "Role", "want": true},
		"bang class does not negate": {"pattern": "[!R]ole", "value": "Pole", "want": false},
		"escaped star": {"pattern": "a\\*", "value": "a*", "want": true},
		"escaped star is literal": {"pattern": "a\\*", "value": "ab", "want": false},
		"escaped dash is no range": {"pattern": "[a\\-z]", "value": "b", "want": false},
		"escaped dash matches itself": {"pattern": "[a\\-z]", "value": "-", "want": true},
		"bracket in a class": {"pattern": "[[]x", "value": "[x", "want": true},
		"dot is literal": {"pattern": "a.b", "value": "axb", "want": false},
		"unclosed class matches nothing": {"pattern": "team[", "value": "team[", "want": false},
		"empty class matches nothing": {"pattern": "[]", "value": "x", "want": false},
		"range without end matches nothing": {"pattern": "[a-]", "value": "a", "want": false},
		"trailing backslash matches nothing": {"pattern": "a\\", "value": "a", "want": false},
		"empty pattern matches empty": {"pattern": "", "value": "", "want": true},
		"empty pattern": {"pattern": "", "value": "x", "want": false},
	}
	lib.path_match(c.pattern, c.value) == c.want
}
