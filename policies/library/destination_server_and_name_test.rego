package tollgate.builtin.destination_server_and_name_test

import data.tollgate.builtin.destination_server_and_name

app(destination) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {"name": "shop", "namespace": "argocd"},
	"spec": {"project": "team-a", "destination": destination},
}

violations(obj) := vs if {
	vs := destination_server_and_name.violation with input as {
		"object": obj,
		"application": obj,
		"context": {"enforcementPoint": "cli", "argocdNamespace": "argocd", "clusterScoped": false},
	}
}

test_server_and_name_denied if {
	violations(app({"server": "https://kubernetes.default.svc", "name": "in-cluster", "namespace": "shop"})) == {{
		"rule": "destination-server-and-name",
		"msg": `Application "shop" destination sets both server "https://kubernetes.default.svc" and name "in-cluster", which Argo CD rejects; keep only one of spec.destination.server and spec.destination.name`,
		"path": ["spec", "destination"],
	}}
}

test_one_of_them_allowed[note] if {
	some note, destination in {
		"server only": {"server": "https://kubernetes.default.svc", "namespace": "shop"},
		"name only": {"name": "in-cluster", "namespace": "shop"},
		"empty name": {"server": "https://kubernetes.default.svc", "name": "", "namespace": "shop"},
		"empty server": {"server": "", "name": "in-cluster"},
		"neither": {"namespace": "shop"},
		"name not a string": {"server": "https://kubernetes.default.svc", "name": 1},
	}
	count(violations(app(destination))) == 0
}

test_other_kinds_ignored if {
	obj := object.union(app({"server": "a", "name": "b"}), {"apiVersion": "example.com/v1"})
	count(violations(obj)) == 0
}
