package tollgate.lib_test

import data.tollgate.lib

test_normalize_repo[url] if {
	some url, want in {
		"https://github.com/org/repo": "https://github.com/org/repo",
		"https://GitHub.com/Org/Repo.git": "https://github.com/org/repo",
		" https://github.com/org/repo.git ": "https://github.com/org/repo",
		"https://github.com/org/repo.git.git": "https://github.com/org/repo.git",
		"https://github.com/org/repo/": "https://github.com/org/repo/",
		"git@github.com:org/repo.git": "git@github.com/org/repo",
		"ssh://git@github.com/org/repo.git": "git@github.com/org/repo",
		"ssh://git@github.com:2222/org/repo": "git@github.com:2222/org/repo",
		"https://user@example.com/org/repo": "https://user@example.com/org/repo",
		"registry-1.docker.io/bitnamicharts": "registry-1.docker.io/bitnamicharts",
		"git@github.com/org/repo": "git@github.com/org/repo",
		"https://github.com/org/*": "https://github.com/org/*",
		"https://github.com/org/{a,b}": "https://github.com/org/%7Ba,b%7D",
		"https://github.com/org/{a,b}/*": "https://github.com/org/%7Ba,b%7D/%2A",
		"https://github.com/org/my repo": "https://github.com/org/my%20repo",
		"https://github.com/org/caf\u00e9": "https://github.com/org/caf%C3%A9",
		"https://{a,b}.example.com/org/repo": "",
		"https://github.com/org/repo?ref=main": "https://github.com/org/repo?ref=main",
	}
	lib.normalize_repo(url) == want
}

test_source_permitted_without_list if {
	not lib.source_permitted(lib.source_patterns({"spec": {}}), "https://github.com/org/repo")
	not lib.source_permitted(lib.source_patterns({}), "https://github.com/org/repo")
	not lib.source_permitted([], "https://github.com/org/repo")
}

test_source_patterns_skip_non_strings if {
	lib.source_patterns({"spec": {"sourceRepos": ["!https://X/*.git", 3, "*"]}}) == ["!https://x/*", "*"]
}

test_project_destinations if {
	lib.project_destinations == [{"server": "*", "namespace": "*"}] with input as {"project": {"spec": {"destinations": [{"server": "*", "namespace": "*"}]}}}
	lib.project_destinations == [] with input as {"project": {"spec": {"destinations": {"server": "*"}}}}
	lib.project_destinations == [] with input as {}
}

test_destination_permitted_with_malformed_entries[note] if {
	dest := {"server": "https://kubernetes.default.svc", "name": "", "namespace": "shop"}
	some note, c in {
		"not objects": {"entries": ["*", 1, null], "want": false},
		"valid beside garbage": {"entries": ["*", {"server": "*", "namespace": "*"}], "want": true},
		"namespace not a string": {"entries": [{"server": "*", "namespace": ["shop"]}], "want": false},
		"server not a string": {"entries": [{"server": 1, "namespace": "*"}], "want": false},
		"deny server not a string": {"entries": [{"server": "*", "namespace": "*"}, {"server": ["!x"], "namespace": "*"}], "want": true},
		"no namespace pattern": {"entries": [{"server": "*"}], "want": false},
	}
	permitted := count({1 | lib.destination_permitted(c.entries, dest)}) == 1
	permitted == c.want
}

# destination_permitted gives Argo CD's answers (isDestinationMatched),
# but a deny entry never permits (Argo CD's documentation).
test_destination_permitted[note] if {
	in_cluster := {"server": "https://kubernetes.default.svc", "name": "", "namespace": "shop"}
	kube_system := {"server": "https://kubernetes.default.svc", "name": "", "namespace": "kube-system"}
	prod := {"server": "https://prod.example.com", "name": "", "namespace": "shop"}
	by_name := {"server": "", "name": "prod", "namespace": "kube-system"}
	some note, c in {
		"allow entry permits": {"dest": in_cluster, "entries": [{"server": "*", "namespace": "shop"}], "want": true},
		"deny entry alone permits nothing": {"dest": in_cluster, "entries": [{"server": "*", "namespace": "!kube-system"}], "want": false},
		"deny entry rejects in its scope": {"dest": kube_system, "entries": [{"server": "*", "namespace": "*"}, {"server": "*", "namespace": "!kube-*"}], "want": false},
		"negated server with a non-matching namespace permits": {"dest": prod, "entries": [{"server": "*", "namespace": "*"}, {"server": "!https://prod.*", "namespace": "kube-system"}], "want": true},
		"negated server with a matching namespace rejects": {"dest": prod, "entries": [{"server": "*", "namespace": "*"}, {"server": "!https://prod.*", "namespace": "sh*"}], "want": false},
		"negated namespace with a non-matching server permits": {"dest": kube_system, "entries": [{"server": "*", "namespace": "*"}, {"server": "https://prod.*", "namespace": "!kube-system"}], "want": true},
		"negated namespace with a matching server rejects": {"dest": kube_system, "entries": [{"server": "*", "namespace": "*"}, {"server": "https://kubernetes.*", "namespace": "!kube-system"}], "want": false},
		"negated alternatives reject each": {"dest": kube_system, "entries": [{"server": "*", "namespace": "*"}, {"server": "*", "namespace": "!{argocd,kube-system}"}], "want": false},
		"negated alternatives permit the rest": {"dest": in_cluster, "entries": [{"server": "*", "namespace": "*"}, {"server": "*", "namespace": "!{argocd,kube-system}"}], "want": true},
		"two negations on one entry leave their intersection": {"dest": {"server": "https://prod.example.com", "name": "", "namespace": "kube-system"}, "entries": [{"server": "*", "namespace": "*"}, {"server": "!https://prod.example.com", "namespace": "!kube-system"}], "want": true},
		"two negations on one entry reject the server elsewhere": {"dest": prod, "entries": [{"server": "*", "namespace": "*"}, {"server": "!https://prod.example.com", "namespace": "!kube-system"}], "want": false},
		"negated namespace of a name entry rejects": {"dest": by_name, "entries": [{"name": "*", "namespace": "*"}, {"name": "prod", "namespace": "!kube-system"}], "want": false},
		"unknown server is in the scope of a server deny": {"dest": by_name, "entries": [{"name": "*", "namespace": "*"}, {"server": "*", "namespace": "!kube-system"}], "want": false},
		"unknown name may be rejected": {"dest": in_cluster, "entries": [{"server": "*", "namespace": "*"}, {"name": "!prod", "namespace": "*"}], "want": false},
		"unknown name outside the deny's namespaces": {"dest": in_cluster, "entries": [{"server": "*", "namespace": "*"}, {"name": "!prod", "namespace": "kube-system"}], "want": true},
		"server entry does not permit a name destination": {"dest": by_name, "entries": [{"server": "*", "namespace": "*"}], "want": false},
	}
	permitted := count({1 | lib.destination_permitted(c.entries, c.dest)}) == 1
	permitted == c.want
}

test_deny_entry_rejects[note] if {
	dest := {"server": "https://prod.example.com", "name": "", "namespace": "kube-system"}
	some note, c in {
		"allow entry": {"entry": {"server": "*", "namespace": "shop"}, "want": false},
		"negated server in scope": {"entry": {"server": "!https://prod.*", "namespace": "kube-*"}, "want": true},
		"negated server out of scope": {"entry": {"server": "!https://prod.*", "namespace": "shop"}, "want": false},
		"negated server for another server matches instead": {"entry": {"server": "!https://dev.*", "namespace": "*"}, "want": false},
		"negated namespace in scope": {"entry": {"server": "https://prod.*", "namespace": "!kube-system"}, "want": true},
		"negated namespace out of scope": {"entry": {"server": "https://dev.*", "namespace": "!kube-system"}, "want": false},
		"negated star": {"entry": {"server": "*", "namespace": "!*"}, "want": true},
		"negated name, name unknown": {"entry": {"name": "!prod", "namespace": "*"}, "want": true},
		"not an object": {"entry": "!x", "want": false},
	}
	rejects := count({1 | lib.deny_entry_rejects(c.entry, dest)}) == 1
	rejects == c.want
}

test_source_permitted[note] if {
	some note, c in {
		"allow pattern": {"patterns": ["https://github.com/org/*"], "repo": "https://github.com/org/shop", "want": true},
		"deny pattern alone permits nothing": {"patterns": ["!https://github.com/evil/*"], "repo": "https://github.com/org/shop", "want": false},
		"deny pattern rejects": {"patterns": ["*", "!https://github.com/evil/*"], "repo": "https://github.com/evil/tool", "want": false},
		"negated alternatives": {"patterns": ["*", "!git@github.com/{evil,bad}/*"], "repo": "git@github.com:bad/tool.git", "want": false},
		"no patterns": {"patterns": [], "repo": "https://github.com/org/shop", "want": false},
	}
	permitted := count({1 | lib.source_permitted(c.patterns, c.repo)}) == 1
	permitted == c.want
}

test_argo_match_non_string_pattern if {
	not lib.argo_match(1, "x", lib.no_delimiters)
	not lib.argo_match(null, "x", lib.no_delimiters)
}

test_resource_in_list[note] if {
	some note, c in {
		"star": {"list": [{"group": "*", "kind": "*"}], "group": "", "kind": "Secret", "want": true},
		"core exact": {"list": [{"group": "", "kind": "Secret"}], "group": "", "kind": "Secret", "want": true},
		"core does not match a named group": {"list": [{"group": "", "kind": "Secret"}], "group": "example.com", "kind": "Secret", "want": false},
		"missing group is the core group": {"list": [{"kind": "Secret"}], "group": "", "kind": "Secret", "want": true},
		"kind glob": {"list": [{"group": "apps", "kind": "Stateful*"}], "group": "apps", "kind": "StatefulSet", "want": true},
		"kind differs": {"list": [{"group": "apps", "kind": "Deployment"}], "group": "apps", "kind": "DaemonSet", "want": false},
		"kind is case sensitive": {"list": [{"group": "apps", "kind": "deployment"}], "group": "apps", "kind": "Deployment", "want": false},
		"braces are literal": {"list": [{"group": "apps", "kind": "{Deployment,DaemonSet}"}], "group": "apps", "kind": "Deployment", "want": false},
		"class": {"list": [{"group": "apps", "kind": "[DS]*"}], "group": "apps", "kind": "StatefulSet", "want": true},
		"name ignored": {"list": [{"group": "apps", "kind": "Deployment", "name": "other"}], "group": "apps", "kind": "Deployment", "want": true},
		"empty list": {"list": [], "group": "apps", "kind": "Deployment", "want": false},
		"not a list": {"list": null, "group": "apps", "kind": "Deployment", "want": false},
	}
	found := count({1 | lib.resource_in_list(c.group, c.kind, c.list)}) == 1
	found == c.want
}

test_named_resource_in_list[note] if {
	some note, c in {
		"no name matches every name": {"list": [{"group": "", "kind": "Namespace"}], "name": "team1", "want": true},
		"empty name matches every name": {"list": [{"group": "", "kind": "Namespace", "name": ""}], "name": "team1", "want": true},
		"name glob": {"list": [{"group": "", "kind": "Namespace", "name": "team1-*"}], "name": "team1-web", "want": true},
		"name glob for other names": {"list": [{"group": "", "kind": "Namespace", "name": "team1-*"}], "name": "team2-web", "want": false},
		"name braces are literal": {"list": [{"group": "", "kind": "Namespace", "name": "{team1,team2}"}], "name": "team1", "want": false},
		"unnamed object and a name glob": {"list": [{"group": "", "kind": "Namespace", "name": "*"}], "name": "", "want": true},
		"unnamed object and a name prefix": {"list": [{"group": "", "kind": "Namespace", "name": "team*"}], "name": "", "want": false},
		"kind differs": {"list": [{"group": "", "kind": "Node", "name": "*"}], "name": "team1", "want": false},
		"name not a string": {"list": [{"group": "", "kind": "Namespace", "name": 1}], "name": "team1", "want": false},
		"second entry": {"list": [{"group": "", "kind": "Namespace", "name": "a*"}, {"group": "", "kind": "Namespace", "name": "t*"}], "name": "team1", "want": true},
	}
	found := count({1 | lib.named_resource_in_list("", "Namespace", c.name, c.list)}) == 1
	found == c.want
}
