package tollgate.builtin.default_project_test

import data.tollgate.builtin.default_project

app(spec) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {"name": "shop", "namespace": "argocd"},
	"spec": object.union({"destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"}}, spec),
}

violations(obj) := vs if {
	vs := default_project.violation with input as {
		"object": obj,
		"application": obj,
		"context": {"enforcementPoint": "cli", "argocdNamespace": "argocd", "clusterScoped": false},
	}
}

test_default_project_denied if {
	violations(app({"project": "default"})) == {{
		"rule": "default-project",
		"msg": `Application "shop" uses the "default" AppProject, which permits every repository, destination and cluster-scoped resource; create an AppProject scoped to the team and set spec.project to it`,
		"path": ["spec", "project"],
	}}
}

test_empty_project_denied_without_path[note] if {
	some note, spec in {"missing": {}, "empty": {"project": ""}}
	[v] := [v | some v in violations(app(spec))]
	v.rule == "default-project"
	not v.path
}

test_team_project_allowed if {
	count(violations(app({"project": "team-a"}))) == 0
	count(violations(app({"project": "defaults"}))) == 0
}

test_other_kinds_ignored if {
	count(violations({"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject", "metadata": {"name": "default"}, "spec": {}})) == 0
	count(violations({"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet", "metadata": {"name": "a"}, "spec": {"template": {"spec": {"project": "default"}}}})) == 0
}
