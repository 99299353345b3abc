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
		"empty list": {"list": [], "group": "apps", "kind": "Deployment", "want": false},
	}
	found := count({1 | lib.resource_in_list(c.group, c.kind, c.list)}) == 1
	found == c.want
}
