package tollgate.builtin.app_namespace_test

import data.tollgate.builtin.app_namespace

ctx := {"enforcementPoint": "cli", "argocdNamespace": "argocd", "clusterScoped": false}

argo(kind, namespace) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": kind,
	"metadata": {"name": "shop", "namespace": namespace},
	"spec": {"project": "team-a"},
}

project(source_namespaces) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "AppProject",
	"metadata": {"name": "team-a", "namespace": "argocd"},
	"spec": {"sourceNamespaces": source_namespaces},
}

review(obj, source_namespaces) := vs if {
	vs := app_namespace.violation with input as {
		"object": obj,
		"application": obj,
		"project": project(source_namespaces),
		"context": ctx,
	}
}

test_application_elsewhere_denied if {
	review(argo("Application", "team-a"), []) == {{
		"rule": "app-namespace",
		"msg": `Application "shop" is in namespace "team-a", but Argo CD reads it only from its own namespace "argocd"; set metadata.namespace to "argocd"`,
		"path": ["metadata", "namespace"],
	}}
}

test_app_project_elsewhere_denied if {
	o := argo("AppProject", "team-a")
	[v] := [v | some v in app_namespace.violation] with input as {"object": o, "context": ctx}
	startswith(v.msg, `AppProject "shop" is in namespace "team-a"`)
}

test_app_project_source_namespaces_do_not_apply if {
	o := argo("AppProject", "team-a")
	count(review(o, ["*"])) == 1
}

test_allowed[note] if {
	some note, o in {
		"Application in argocd": argo("Application", "argocd"),
		"AppProject in argocd": argo("AppProject", "argocd"),
		"Application without namespace": json.remove(argo("Application", ""), ["metadata/namespace"]),
		"Application with empty namespace": argo("Application", ""),
		"other kind elsewhere": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "team-a"}},
		"ApplicationSet elsewhere": argo("ApplicationSet", "team-a"),
	}
	count(review(o, [])) == 0
}

test_custom_argocd_namespace if {
	custom := object.union(ctx, {"argocdNamespace": "gitops"})
	count(app_namespace.violation) == 0 with input as {"object": argo("AppProject", "gitops"), "context": custom}
	count(app_namespace.violation) == 1 with input as {"object": argo("AppProject", "argocd"), "context": custom}
}

test_source_namespaces_permit_application[note] if {
	some note, patterns in {
		"exact": ["team-a"],
		"glob": ["team-*"],
		"star": ["*"],
		"regular expression": ["/^team-[a-z]$/"],
		"second entry": ["other", "team-a"],
	}
	count(review(argo("Application", "team-a"), patterns)) == 0
}

test_source_namespaces_not_matching[note] if {
	some note, patterns in {
		"other": ["team-b"],
		"glob": ["shop-*"],
		"regular expression": ["/^team-[0-9]$/"],
		"slashes only": ["/"],
	}
	count(review(argo("Application", "team-a"), patterns)) == 1
}

test_source_namespaces_of_parent_project_ignored if {
	parent := object.union(argo("Application", "argocd"), {"metadata": {"name": "parent"}})
	child := argo("Application", "team-a")
	vs := app_namespace.violation with input as {"object": child, "application": parent, "project": project(["*"]), "context": ctx}
	count(vs) == 1
}
