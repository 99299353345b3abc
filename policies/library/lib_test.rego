package tollgate.lib_test

import data.tollgate.lib

test_api_group[note] if {
	some note, c in {
		"core": {"in": "v1", "want": ""},
		"apps": {"in": "apps/v1", "want": "apps"},
		"dotted": {"in": "networking.k8s.io/v1", "want": "networking.k8s.io"},
		"empty": {"in": "", "want": ""},
		"not a string": {"in": 1, "want": ""},
	}
	lib.api_group(c.in) == c.want
}

test_group_of if {
	lib.group_of({"apiVersion": "batch/v1", "kind": "Job"}) == "batch"
	lib.group_of({"apiVersion": "v1", "kind": "Pod"}) == ""
	not lib.group_of({"kind": "Pod"})
}

test_str if {
	lib.str({"a": "b"}, "a") == "b"
	lib.str({"a": 1}, "a") == ""
	lib.str({}, "a") == ""
	lib.str("not an object", "a") == ""
}

test_non_empty_string if {
	lib.non_empty_string("x")
	not lib.non_empty_string("")
	not lib.non_empty_string(" \t")
	not lib.non_empty_string(null)
	not lib.non_empty_string(["x"])
}

test_names[note] if {
	some note, c in {
		"name": {"obj": {"kind": "Pod", "metadata": {"name": "web", "namespace": "shop"}}, "name": "web", "namespace": "shop", "describe": `Pod "web"`},
		"generateName": {"obj": {"kind": "Job", "metadata": {"generateName": "migrate-"}}, "name": "", "namespace": "", "describe": `Job "migrate-*"`},
		"unnamed": {"obj": {"kind": "Pod", "metadata": {}}, "name": "", "namespace": "", "describe": `Pod "(unnamed)"`},
		"no metadata": {"obj": {"kind": "Pod"}, "name": "", "namespace": "", "describe": `Pod "(unnamed)"`},
		"metadata not an object": {"obj": {"kind": "Pod", "metadata": "web"}, "name": "", "namespace": "", "describe": `Pod "(unnamed)"`},
		"no kind": {"obj": {"metadata": {"name": "web"}}, "name": "web", "namespace": "", "describe": `object "web"`},
	}
	lib.name_of(c.obj) == c.name
	lib.namespace_of(c.obj) == c.namespace
	lib.describe(c.obj) == c.describe
}

test_describe_group_kind if {
	lib.describe_group_kind("", "Namespace") == `"Namespace" (core group)`
	lib.describe_group_kind("apps", "Deployment") == `"apps/Deployment"`
}

test_argocd_namespace if {
	lib.argocd_namespace == "gitops" with input as {"context": {"argocdNamespace": "gitops"}}
	lib.argocd_namespace == "argocd" with input as {"context": {"argocdNamespace": ""}}
	lib.argocd_namespace == "argocd" with input as {"context": {}}
}

test_argocd_namespace_of[note] if {
	some note, c in {
		"set": {"context": {"argocdNamespace": "gitops"}, "want": "gitops"},
		"empty": {"context": {"argocdNamespace": ""}, "want": "argocd"},
		"blank": {"context": {"argocdNamespace": "  "}, "want": "argocd"},
		"not a string": {"context": {"argocdNamespace": 7}, "want": "argocd"},
		"missing": {"context": {}, "want": "argocd"},
		"context not an object": {"context": "gitops", "want": "argocd"},
	}
	lib.argocd_namespace_of(c.context) == c.want
	lib.argocd_namespace == c.want with input as {"context": c.context}
}

test_argocd_namespace_without_context if {
	lib.argocd_namespace == "argocd" with input as {}
}

app := {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "parent"}}

child := {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "child"}}

cm := {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}

test_rendered if {
	lib.rendered with input as {"object": cm, "application": app}
	lib.rendered with input as {"object": child, "application": app}
	not lib.rendered with input as {"object": app, "application": app}
	not lib.rendered with input as {"object": cm}
}

test_reviewed_application if {
	lib.reviewed_application with input as {"object": app, "application": app}
	lib.reviewed_application with input as {"object": app}
	not lib.reviewed_application with input as {"object": child, "application": app}
	not lib.reviewed_application with input as {"object": cm, "application": app}
}

test_object_is_argocd_kind[note] if {
	some note, c in {
		"Application": {"obj": app, "want": true},
		"ApplicationSet": {"obj": {"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet"}, "want": true},
		"AppProject": {"obj": {"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject"}, "want": true},
		"Rollout": {"obj": {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout"}, "want": false},
		"foreign Application": {"obj": {"apiVersion": "example.com/v1", "kind": "Application"}, "want": false},
	}
	got := count({1 | lib.object_is_argocd_kind with input as {"object": c.obj}}) == 1
	got == c.want
}

test_destination_of if {
	lib.destination_of({"spec": {"destination": {"server": "s", "namespace": "n"}}}) == {"server": "s", "name": "", "namespace": "n"}
	lib.destination_of({"spec": {}}) == {"server": "", "name": "", "namespace": ""}
	lib.destination_of({"spec": {"destination": "s"}}) == {"server": "", "name": "", "namespace": ""}
}

test_app_project if {
	lib.app_project({"spec": {"project": "team-a"}}) == "team-a"
	lib.app_project({"spec": {"project": ""}}) == "default"
	lib.app_project({"spec": {}}) == "default"
}

test_has_project if {
	lib.has_project with input as {"project": {"metadata": {"name": "p"}}}
	not lib.has_project with input as {}
	not lib.has_project with input as {"project": null}
}

test_rendered_namespace if {
	parent := {"spec": {"destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"}}}
	lib.rendered_namespace == ["jobs", {"path": ["metadata", "namespace"]}] with input as {"object": {"metadata": {"namespace": "jobs"}}, "application": parent}
	lib.rendered_namespace == ["shop", {}] with input as {"object": {"metadata": {"name": "x"}}, "application": parent}
	lib.rendered_namespace == ["", {}] with input as {"object": {"metadata": {}}, "application": {"spec": {}}}
}
