package main

test_configmap_without_team_denied if {
	count(deny) == 1 with input as {"kind": "ConfigMap", "metadata": {"name": "a"}}
}

test_configmap_with_team_allowed if {
	count(deny) == 0 with input as {"kind": "ConfigMap", "metadata": {"name": "a", "labels": {"team": "web"}}}
}
