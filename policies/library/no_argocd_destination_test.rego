package tollgate.builtin.no_argocd_destination_test

import data.tollgate.builtin.no_argocd_destination

ctx := {"enforcementPoint": "cli", "argocdNamespace": "argocd", "clusterScoped": false}

app(namespace) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {"name": "shop", "namespace": "argocd"},
	"spec": {
		"project": "team-a",
		"source": {"repoURL": "https://github.com/org/shop", "path": "deploy"},
		"destination": {"server": "https://kubernetes.default.svc", "namespace": namespace},
	},
}

violations(review) := vs if {
	vs := no_argocd_destination.violation with input as review
}

review_app(a) := violations({"object": a, "application": a, "context": ctx})

# (a) Applications.

test_application_into_argocd_denied if {
	review_app(app("argocd")) == {{
		"rule": "no-argocd-destination",
		"msg": `Application "shop" deploys into namespace "argocd", where Argo CD runs with its repository and cluster credentials; set spec.destination.namespace to a namespace of the team`,
		"path": ["spec", "destination", "namespace"],
	}}
}

test_application_into_team_namespace_allowed if {
	count(review_app(app("shop"))) == 0
}

test_application_without_destination_namespace_allowed if {
	count(review_app(json.remove(app(""), ["spec/destination/namespace"]))) == 0
	count(review_app(json.remove(app(""), ["spec/destination"]))) == 0
}

test_custom_argocd_namespace if {
	custom := object.union(ctx, {"argocdNamespace": "gitops"})
	count(violations({"object": app("gitops"), "application": app("gitops"), "context": custom})) == 1
	count(violations({"object": app("argocd"), "application": app("argocd"), "context": custom})) == 0
}

test_argocd_namespace_defaults_to_argocd if {
	bare := {"enforcementPoint": "cli", "clusterScoped": false}
	count(violations({"object": app("argocd"), "application": app("argocd"), "context": bare})) == 1
}

# (b) AppProjects.

project(destinations) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "AppProject",
	"metadata": {"name": "team-a", "namespace": "argocd"},
	"spec": {"sourceRepos": ["*"], "destinations": destinations},
}

review_project(destinations) := violations({"object": project(destinations), "context": ctx})

test_project_permitting_argocd_denied[note] if {
	some note, c in {
		"star": {"want": {0}, "destinations": [{"server": "*", "namespace": "*"}]},
		"prefix glob": {"want": {0}, "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "argo*"}]},
		"exact": {"want": {0}, "destinations": [{"name": "in-cluster", "namespace": "argocd"}]},
		"class": {"want": {0}, "destinations": [{"server": "*", "namespace": "[a]rgocd"}]},
		"two matching entries": {"want": {0, 2}, "destinations": [
			{"server": "*", "namespace": "argocd"},
			{"server": "*", "namespace": "team-a"},
			{"server": "*", "namespace": "argo?d"},
		]},
		"deny entry for another namespace beside star": {"want": {1}, "destinations": [
			{"server": "*", "namespace": "!kube-system"},
			{"server": "*", "namespace": "*"},
		]},
		"deny entry on another server only": {"want": {0}, "destinations": [
			{"server": "*", "namespace": "*"},
			{"server": "https://prod.example.com", "namespace": "!argocd"},
		]},
		"deny entry covers one of two servers": {"want": {1}, "destinations": [
			{"server": "https://a.example.com", "namespace": "*"},
			{"server": "https://b.example.com", "namespace": "*"},
			{"server": "https://a.example.com", "namespace": "!argocd"},
		]},
	}
	got := {v.path[2] | some v in review_project(c.destinations)}
	got == c.want
}

test_project_message_and_path if {
	review_project([{"server": "*", "namespace": "team-a"}, {"server": "*", "namespace": "*"}]) == {{
		"rule": "no-argocd-destination",
		"msg": `AppProject "team-a" permits the Argo CD namespace "argocd" through spec.destinations[1] (namespace "*"); add {server: "*", namespace: "!argocd"} to spec.destinations or narrow the namespace pattern`,
		"path": ["spec", "destinations", 1, "namespace"],
	}}
}

test_project_rejecting_argocd_allowed[note] if {
	some note, destinations in {
		"star with negated argocd": [
			{"server": "*", "namespace": "*"},
			{"server": "*", "namespace": "!argocd"},
		],
		"negation first": [
			{"server": "*", "namespace": "!argocd"},
			{"server": "*", "namespace": "*"},
		],
		"negated glob": [
			{"server": "*", "namespace": "*"},
			{"server": "*", "namespace": "!argo*"},
		],
		"negated star": [
			{"server": "*", "namespace": "team-*"},
			{"server": "*", "namespace": "!*"},
		],
		"only team namespaces": [{"server": "*", "namespace": "team-*"}],
		"deny entry for another namespace alone permits nothing": [{"server": "*", "namespace": "!kube-system"}],
		"negated alternatives": [
			{"server": "*", "namespace": "*"},
			{"server": "*", "namespace": "!{argocd,kube-system}"},
		],
		"deny entry on the allow entry's own server": [
			{"server": "https://a.example.com", "namespace": "*"},
			{"server": "https://a.example.com", "namespace": "!argocd"},
		],
		"deny entry on every name": [
			{"name": "in-cluster", "namespace": "*"},
			{"name": "*", "namespace": "!argocd"},
		],
		"no destinations": [],
	}
	count(review_project(destinations)) == 0
}

test_project_with_negated_argo_glob_and_custom_namespace if {
	custom := object.union(ctx, {"argocdNamespace": "gitops"})
	destinations := [{"server": "*", "namespace": "*"}, {"server": "*", "namespace": "!argo*"}]
	count(violations({"object": project(destinations), "context": custom})) == 1
}

test_project_without_spec_allowed if {
	count(violations({"object": json.remove(project([]), ["spec"]), "context": ctx})) == 0
}

# (c) Rendered objects.

config_map(namespace) := {
	"apiVersion": "v1",
	"kind": "ConfigMap",
	"metadata": {"name": "settings", "namespace": namespace},
}

review_rendered(obj, a, cluster_scoped) := violations({
	"object": obj,
	"application": a,
	"context": object.union(ctx, {"clusterScoped": cluster_scoped}),
})

test_rendered_object_in_argocd_denied if {
	review_rendered(config_map("argocd"), app("shop"), false) == {{
		"rule": "no-argocd-destination",
		"msg": `ConfigMap "settings" of Application "shop" lands in namespace "argocd", where Argo CD runs with its repository and cluster credentials; deploy it into a namespace of the team`,
		"path": ["metadata", "namespace"],
	}}
}

test_rendered_object_defaults_to_destination_namespace if {
	obj := json.remove(config_map(""), ["metadata/namespace"])
	[v] := [v | some v in review_rendered(obj, app("argocd"), false)]
	not v.path
	contains(v.msg, `lands in namespace "argocd"`)
}

test_rendered_object_own_namespace_wins if {
	count(review_rendered(config_map("shop"), app("argocd"), false)) == 0
}

test_rendered_cluster_scoped_object_allowed if {
	ns := {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}}
	count(review_rendered(ns, app("argocd"), true)) == 0
}

test_rendered_argocd_objects_allowed[kind] if {
	some kind in ["Application", "ApplicationSet", "AppProject"]
	child := {"apiVersion": "argoproj.io/v1alpha1", "kind": kind, "metadata": {"name": "child", "namespace": "argocd"}}
	count(review_rendered(child, app("argocd"), false)) == 0
}

test_manifest_without_application_allowed if {
	count(violations({"object": config_map("argocd"), "context": ctx})) == 0
}

# in_argocd_namespace answers false, not undefined, for other namespaces,
# so that the evaluator keeps that answer too.
test_in_argocd_namespace[note] if {
	some note, c in {
		"argocd": {"ns": "argocd", "context": ctx, "want": true},
		"team namespace": {"ns": "shop", "context": ctx, "want": false},
		"custom namespace": {"ns": "gitops", "context": {"argocdNamespace": "gitops"}, "want": true},
		"default namespace": {"ns": "argocd", "context": {"argocdNamespace": "gitops"}, "want": false},
		"blank namespace defaults": {"ns": "argocd", "context": {"argocdNamespace": "  "}, "want": true},
		"blank namespace is not a namespace": {"ns": "  ", "context": {"argocdNamespace": "  "}, "want": false},
		"no namespace in context": {"ns": "argocd", "context": {}, "want": true},
	}
	no_argocd_destination.in_argocd_namespace(c.ns, c.context) == c.want
}
