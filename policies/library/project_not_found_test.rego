package tollgate.builtin.project_not_found_test

import data.tollgate.builtin.project_not_found

ctx := {"enforcementPoint": "cli", "argocdNamespace": "argocd", "clusterScoped": false}

app(spec) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {"name": "shop", "namespace": "argocd"},
	"spec": object.union({"destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"}}, spec),
}

project := {"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject", "metadata": {"name": "team-a"}, "spec": {}}

test_missing_project_denied if {
	a := app({"project": "team-a"})
	vs := project_not_found.violation with input as {"object": a, "application": a, "context": ctx}
	vs == {{
		"rule": "project-not-found",
		"msg": `Application "shop" uses AppProject "team-a", which does not exist; create the AppProject or set spec.project to an existing project`,
		"path": ["spec", "project"],
	}}
}

test_missing_default_project_named if {
	a := app({})
	vs := project_not_found.violation with input as {"object": a, "application": a, "context": ctx}
	[v] := [v | some v in vs]
	contains(v.msg, `uses AppProject "default"`)
	not v.path
}

test_found_project_allowed if {
	a := app({"project": "team-a"})
	vs := project_not_found.violation with input as {"object": a, "application": a, "project": project, "context": ctx}
	count(vs) == 0
}

test_rendered_objects_ignored if {
	parent := app({"project": "team-a"})
	child := object.union(app({"project": "missing"}), {"metadata": {"name": "child"}})
	cm := {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
	count(project_not_found.violation) == 0 with input as {"object": child, "application": parent, "context": ctx}
	count(project_not_found.violation) == 0 with input as {"object": cm, "application": parent, "context": ctx}
	count(project_not_found.violation) == 0 with input as {"object": project, "context": ctx}
}
