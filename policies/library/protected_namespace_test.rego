package tollgate.builtin.protected_namespace_test

import data.tollgate.builtin.protected_namespace
import data.tollgate.lib

ctx := {
	"enforcementPoint": "sync",
	"argocdNamespace": "argocd",
	"clusterScoped": false,
	"protectedNamespaces": ["tollgate-system", "kube-system", "kube-public", "kube-node-lease"],
}

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
	vs := protected_namespace.violation with input as review
}

review_app(a) := violations({"object": a, "application": a, "context": ctx})

# (a) Applications.

test_application_into_protected_namespace_denied if {
	review_app(app("tollgate-system")) == {{
		"rule": "protected-namespace",
		"msg": `Application "shop" deploys into the protected namespace "tollgate-system"; set spec.destination.namespace to a namespace of the team`,
		"path": ["spec", "destination", "namespace"],
	}}
}

test_application_into_each_protected_namespace_denied[ns] if {
	some ns in ctx.protectedNamespaces
	count(review_app(app(ns))) == 1
}

test_application_into_team_namespace_allowed if {
	count(review_app(app("shop"))) == 0
	count(review_app(json.remove(app(""), ["spec/destination"]))) == 0
}

test_nothing_protected_without_the_list if {
	bare := json.remove(ctx, ["protectedNamespaces"])
	count(violations({"object": app("kube-system"), "application": app("kube-system"), "context": bare})) == 0
}

test_configured_list_replaces_default if {
	custom := object.union(ctx, {"protectedNamespaces": ["platform"]})
	count(violations({"object": app("platform"), "application": app("platform"), "context": custom})) == 1
	count(violations({"object": app("kube-system"), "application": app("kube-system"), "context": custom})) == 0
}

# (b) AppProjects.

project(destinations) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "AppProject",
	"metadata": {"name": "team-a", "namespace": "argocd"},
	"spec": {"sourceRepos": ["*"], "destinations": destinations},
}

review_project(destinations) := {v.path[2]: v.msg |
	some v in violations({"object": project(destinations), "context": ctx})
}

all_four := `"tollgate-system", "kube-system", "kube-public", "kube-node-lease"`

test_project_permitting_protected_namespaces_denied[note] if {
	some note, c in {
		"star": {
			"destinations": [{"server": "*", "namespace": "*"}],
			"want": {0: all_four},
		},
		"kube glob": {
			"destinations": [{"server": "*", "namespace": "kube-*"}],
			"want": {0: `"kube-system", "kube-public", "kube-node-lease"`},
		},
		# The README's old advice: "*" with "!argocd" lets every other namespace in.
		"only argocd negated": {
			"destinations": [{"server": "*", "namespace": "*"}, {"server": "*", "namespace": "!argocd"}],
			"want": {0: all_four},
		},
		"star with kube negated": {
			"destinations": [{"server": "*", "namespace": "*"}, {"server": "*", "namespace": "!kube-*"}],
			"want": {0: `"tollgate-system"`},
		},
		"two entries": {
			"destinations": [{"server": "*", "namespace": "kube-system"}, {"server": "*", "namespace": "tollgate-*"}],
			"want": {0: `"kube-system"`, 1: `"tollgate-system"`},
		},
	}
	got := {i: ns |
		some i, msg in review_project(c.destinations)
		ns := regex.find_all_string_submatch_n(`namespace\(s\) (.*) through`, msg, 1)[0][1]
	}
	got == c.want
}

test_project_message_and_path if {
	vs := violations({"object": project([{"server": "*", "namespace": "kube-*"}]), "context": ctx})
	vs == {{
		"rule": "protected-namespace",
		"msg": `AppProject "team-a" permits the protected namespace(s) "kube-system", "kube-public", "kube-node-lease" through spec.destinations[0] (namespace "kube-*"); add a "!" entry such as {server: "*", namespace: "!kube-system"} for each to spec.destinations or narrow the namespace pattern`,
		"path": ["spec", "destinations", 0, "namespace"],
	}}
}

test_project_rejecting_protected_namespaces_allowed[note] if {
	some note, destinations in {
		"team namespaces": [{"server": "*", "namespace": "team-*"}],
		"star with every protected namespace negated": [
			{"server": "*", "namespace": "*"},
			{"server": "*", "namespace": "!argocd"},
			{"server": "*", "namespace": "!tollgate-system"},
			{"server": "*", "namespace": "!kube-*"},
		],
		"no destinations": [],
	}
	count(review_project(destinations)) == 0
}

# (c) Rendered objects.

pod(namespace) := {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {"name": "steal", "namespace": namespace},
	"spec": {
		"serviceAccountName": "tollgate-controller",
		"containers": [{"name": "c", "image": "busybox:1.37"}],
	},
}

review_rendered(obj, a, cluster_scoped) := violations({
	"object": obj,
	"application": a,
	"context": object.union(ctx, {"clusterScoped": cluster_scoped}),
})

test_rendered_pod_in_tollgate_namespace_denied if {
	review_rendered(pod("tollgate-system"), app("shop"), false) == {{
		"rule": "protected-namespace",
		"msg": `Pod "steal" of Application "shop" lands in the protected namespace "tollgate-system"; deploy it into a namespace of the team`,
		"path": ["metadata", "namespace"],
	}}
}

test_rendered_object_defaults_to_destination_namespace if {
	obj := json.remove(pod(""), ["metadata/namespace"])
	[v] := [v | some v in review_rendered(obj, app("kube-system"), false)]
	not v.path
	contains(v.msg, `lands in the protected namespace "kube-system"`)
}

test_rendered_object_own_namespace_wins if {
	count(review_rendered(pod("shop"), app("kube-system"), false)) == 0
}

test_rendered_cluster_scoped_object_allowed if {
	crb := {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "x"}}
	count(review_rendered(crb, app("kube-system"), true)) == 0
}

test_manifest_without_application_allowed if {
	count(violations({"object": pod("kube-system"), "context": ctx})) == 0
}

# (d) Rendered Namespaces.

test_rendered_protected_namespace_object_denied if {
	ns := {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system", "labels": {"pod-security.kubernetes.io/enforce": "privileged"}}}
	review_rendered(ns, app("shop"), true) == {{
		"rule": "protected-namespace",
		"msg": `Application "shop" renders the protected Namespace "kube-system"; leave it to the cluster's operators`,
		"path": ["metadata", "name"],
	}}
}

test_rendered_team_namespace_object_allowed if {
	ns := {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}
	count(review_rendered(ns, app("shop"), true)) == 0
}

# is_protected answers false, not undefined, so the evaluator keeps that
# answer too.
test_is_protected[note] if {
	some note, c in {
		"protected": {"ns": "kube-system", "want": true},
		"team namespace": {"ns": "shop", "want": false},
		"empty": {"ns": "", "want": false},
	}
	lib.is_protected(c.ns, ctx) == c.want
}
