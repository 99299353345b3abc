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
