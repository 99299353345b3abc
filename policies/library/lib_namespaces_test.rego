package tollgate.lib_test

import data.tollgate.lib

project(destinations) := {"spec": {"destinations": destinations}}

test_entries_permitting_namespace[note] if {
	some note, c in {
		"matching pattern": {"want": {1}, "destinations": [
			{"server": "*", "namespace": "team-*"},
			{"server": "*", "namespace": "kube-*"},
		]},
		"a deny entry never permits": {"want": set(), "destinations": [{"server": "*", "namespace": "!argocd"}]},
		"deny on another cluster": {"want": {0}, "destinations": [
			{"server": "https://a", "namespace": "*"},
			{"server": "https://b", "namespace": "!kube-system"},
		]},
		"matching pattern wins over negations": {"want": {1}, "destinations": [
			{"server": "*", "namespace": "!argocd"},
			{"server": "*", "namespace": "*"},
		]},
		"rejected by a negation": {"want": set(), "destinations": [
			{"server": "*", "namespace": "*"},
			{"server": "*", "namespace": "!kube-system"},
		]},
		"not matched": {"want": set(), "destinations": [{"server": "*", "namespace": "team-*"}]},
		"no destinations": {"want": set(), "destinations": []},
	}
	lib.entries_permitting_namespace(project(c.destinations), "kube-system") == c.want
}

test_entries_permitting_namespace_without_spec if {
	lib.entries_permitting_namespace({}, "kube-system") == set()
}
