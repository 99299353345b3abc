package tollgate.builtin.missing_resources_finalizer_test

import data.tollgate.builtin.missing_resources_finalizer

app(metadata) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": object.union({"name": "shop", "namespace": "argocd"}, metadata),
	"spec": {"project": "team-a"},
}

violations(obj) := vs if {
	vs := missing_resources_finalizer.violation with input as {
		"object": obj,
		"application": obj,
		"context": {"enforcementPoint": "cli", "argocdNamespace": "argocd", "clusterScoped": false},
	}
}

test_finalizer_present_allowed[f] if {
	some f in [
		"resources-finalizer.argocd.argoproj.io",
		"resources-finalizer.argocd.argoproj.io/foreground",
		"resources-finalizer.argocd.argoproj.io/background",
	]
	count(violations(app({"finalizers": ["example.com/other", f]}))) == 0
}

test_no_finalizers_denied if {
	violations(app({})) == {{
		"rule": "missing-resources-finalizer",
		"msg": `Application "shop" has no resources-finalizer.argocd.argoproj.io finalizer, so deleting it leaves its resources running unmanaged; add "resources-finalizer.argocd.argoproj.io" to metadata.finalizers`,
		"path": ["metadata"],
	}}
}

test_other_finalizers_denied[note] if {
	some note, finalizers in {
		"other": ["example.com/cleanup"],
		"empty": [],
		"typo": ["resources-finalizer.argocd.argoproj.io/orphan"],
		"prefix only": ["resources-finalizer"],
	}
	[v] := [v | some v in violations(app({"finalizers": finalizers}))]
	v.path == ["metadata", "finalizers"]
}

test_other_kinds_ignored if {
	project := {"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject", "metadata": {"name": "team-a"}}
	count(violations(project)) == 0
}
