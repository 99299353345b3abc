package tollgate.builtin.project_destination_denied_test

import data.tollgate.builtin.project_destination_denied

in_cluster := "https://kubernetes.default.svc"

app(destination) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {"name": "shop", "namespace": "argocd"},
	"spec": {
		"project": "team-a",
		"source": {"repoURL": "https://github.com/org/shop"},
		"destination": destination,
	},
}

project(destinations) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "AppProject",
	"metadata": {"name": "team-a", "namespace": "argocd"},
	"spec": {"sourceRepos": ["*"], "destinations": destinations},
}

ctx := {"enforcementPoint": "cli", "argocdNamespace": "argocd", "clusterScoped": false}

review_app(destination, destinations) := vs if {
	a := app(destination)
	vs := project_destination_denied.violation with input as {
		"object": a, "application": a, "project": project(destinations), "context": ctx,
	}
}

permitted(destination, destinations) if count(review_app(destination, destinations)) == 0

test_permitted_destinations[note] if {
	some note, c in {
		"star": {"dest": {"server": in_cluster, "namespace": "shop"}, "entries": [{"server": "*", "namespace": "*"}]},
		"exact": {"dest": {"server": in_cluster, "namespace": "shop"}, "entries": [{"server": in_cluster, "namespace": "shop"}]},
		"namespace glob": {"dest": {"server": in_cluster, "namespace": "team-a-shop"}, "entries": [{"server": in_cluster, "namespace": "team-a-*"}]},
		"server glob crosses dots and slashes": {"dest": {"server": "https://prod.eu.example.com:6443", "namespace": "shop"}, "entries": [{"server": "https://*.example.com:6443", "namespace": "*"}]},
		"by name": {"dest": {"name": "prod", "namespace": "shop"}, "entries": [{"name": "prod", "namespace": "shop"}]},
		# Argo CD resolves the name to its cluster's server first.
		"in-cluster by name, its server listed": {"dest": {"name": "in-cluster", "namespace": "shop"}, "entries": [{"server": in_cluster, "namespace": "shop"}]},
		"in-cluster by name, any server": {"dest": {"name": "in-cluster", "namespace": "shop"}, "entries": [{"server": "*", "namespace": "*"}]},
		"name glob": {"dest": {"name": "prod-eu", "namespace": "shop"}, "entries": [{"name": "prod-*", "namespace": "*"}]},
		"second entry matches": {"dest": {"server": in_cluster, "namespace": "shop"}, "entries": [{"server": in_cluster, "namespace": "other"}, {"server": in_cluster, "namespace": "shop"}]},
		"negation beside star": {"dest": {"server": in_cluster, "namespace": "shop"}, "entries": [{"server": "*", "namespace": "*"}, {"server": "*", "namespace": "!kube-*"}]},
		"server negation for another server": {"dest": {"server": in_cluster, "namespace": "shop"}, "entries": [{"server": "*", "namespace": "*"}, {"server": "!https://prod.example.com", "namespace": "*"}]},
		"empty namespace with star": {"dest": {"server": in_cluster}, "entries": [{"server": "*", "namespace": "*"}]},
		"namespace alternatives": {"dest": {"server": in_cluster, "namespace": "billing"}, "entries": [{"server": "*", "namespace": "{shop,billing}"}]},
		# A deny entry rejects only where the rest of it matches.
		"negated server with another namespace": {"dest": {"server": "https://prod.example.com", "namespace": "shop"}, "entries": [{"server": "*", "namespace": "*"}, {"server": "!https://prod.example.com", "namespace": "kube-system"}]},
		"negated namespace on another server": {"dest": {"server": in_cluster, "namespace": "kube-system"}, "entries": [{"server": "*", "namespace": "*"}, {"server": "https://prod.example.com", "namespace": "!kube-system"}]},
		"negated name with another namespace": {"dest": {"name": "prod", "namespace": "shop"}, "entries": [{"name": "*", "namespace": "*"}, {"name": "!prod", "namespace": "kube-system"}]},
		"negated namespace for another name": {"dest": {"name": "dev", "namespace": "kube-system"}, "entries": [{"name": "*", "namespace": "*"}, {"name": "prod", "namespace": "!kube-system"}]},
		"negated alternatives for other namespaces": {"dest": {"server": in_cluster, "namespace": "shop"}, "entries": [{"server": "*", "namespace": "*"}, {"server": "*", "namespace": "!{kube-system,argocd}"}]},
		# Both fields negated: prod is rejected outside kube-system and
		# kube-system outside prod (as Argo CD scopes them); prod's
		# kube-system is left to the other entries.
		"both negated, their intersection left to the star": {"dest": {"server": "https://prod.example.com", "namespace": "kube-system"}, "entries": [{"server": "*", "namespace": "*"}, {"server": "!https://prod.example.com", "namespace": "!kube-system"}]},
	}
	permitted(c.dest, c.entries)
}

test_denied_destinations[note] if {
	some note, c in {
		"no entries": {"dest": {"server": in_cluster, "namespace": "shop"}, "entries": []},
		"other namespace": {"dest": {"server": in_cluster, "namespace": "shop"}, "entries": [{"server": in_cluster, "namespace": "other"}]},
		"other server": {"dest": {"server": "https://prod.example.com", "namespace": "shop"}, "entries": [{"server": in_cluster, "namespace": "*"}]},
		"name entry does not match a server destination": {"dest": {"server": in_cluster, "namespace": "shop"}, "entries": [{"name": "in-cluster", "namespace": "*"}]},
		"server entry does not match a name destination": {"dest": {"name": "prod", "namespace": "shop"}, "entries": [{"server": "*", "namespace": "*"}]},
		"in-cluster by name, another server listed": {"dest": {"name": "in-cluster", "namespace": "shop"}, "entries": [{"server": "https://prod.example.com", "namespace": "*"}]},
		"negated namespace": {"dest": {"server": in_cluster, "namespace": "kube-system"}, "entries": [{"server": "*", "namespace": "*"}, {"server": "*", "namespace": "!kube-*"}]},
		"negation listed first": {"dest": {"server": in_cluster, "namespace": "kube-system"}, "entries": [{"server": "*", "namespace": "!kube-system"}, {"server": "*", "namespace": "*"}]},
		"negated server": {"dest": {"server": "https://prod.example.com", "namespace": "shop"}, "entries": [{"server": "*", "namespace": "*"}, {"server": "!https://prod.*", "namespace": "*"}]},
		"negated name": {"dest": {"name": "prod", "namespace": "shop"}, "entries": [{"name": "*", "namespace": "*"}, {"name": "!prod", "namespace": "*"}]},
		"negated star": {"dest": {"server": in_cluster, "namespace": "shop"}, "entries": [{"server": "*", "namespace": "*"}, {"server": "*", "namespace": "!*"}]},
		"empty namespace needs a pattern matching it": {"dest": {"server": in_cluster}, "entries": [{"server": "*", "namespace": "shop"}]},
		"no destination at all": {"dest": {}, "entries": [{"server": "*", "namespace": "*"}]},
		"namespace alternatives exclude the rest": {"dest": {"server": in_cluster, "namespace": "kube-system"}, "entries": [{"server": "*", "namespace": "{shop,billing}"}]},
		"negated alternatives": {"dest": {"server": in_cluster, "namespace": "argocd"}, "entries": [{"server": "*", "namespace": "*"}, {"server": "*", "namespace": "!{kube-system,argocd}"}]},
		"negated server in its namespace": {"dest": {"server": "https://prod.example.com", "namespace": "kube-system"}, "entries": [{"server": "*", "namespace": "*"}, {"server": "!https://prod.example.com", "namespace": "kube-system"}]},
		"negated namespace on its server": {"dest": {"server": "https://prod.example.com", "namespace": "kube-system"}, "entries": [{"server": "*", "namespace": "*"}, {"server": "https://prod.example.com", "namespace": "!kube-system"}]},
		"negated name in its namespace": {"dest": {"name": "prod", "namespace": "kube-system"}, "entries": [{"name": "*", "namespace": "*"}, {"name": "!prod", "namespace": "kube-system"}]},
		"both negated, server outside the namespace": {"dest": {"server": "https://prod.example.com", "namespace": "shop"}, "entries": [{"server": "*", "namespace": "*"}, {"server": "!https://prod.example.com", "namespace": "!kube-system"}]},
		"both negated, namespace outside the server": {"dest": {"server": in_cluster, "namespace": "kube-system"}, "entries": [{"server": "*", "namespace": "*"}, {"server": "!https://prod.example.com", "namespace": "!kube-system"}]},
		# Differences from Argo CD, which permits these (see docs/policies.md).
		"lone namespace negation permits nothing": {"dest": {"server": in_cluster, "namespace": "shop"}, "entries": [{"server": "*", "namespace": "!kube-system"}]},
		"lone server negation permits nothing": {"dest": {"server": in_cluster, "namespace": "shop"}, "entries": [{"server": "!https://prod.example.com", "namespace": "*"}]},
		"negated namespace in a name entry": {"dest": {"name": "prod", "namespace": "kube-system"}, "entries": [{"name": "*", "namespace": "*"}, {"name": "prod", "namespace": "!kube-system"}]},
		# Offline the cluster half an Application leaves unset is unknown;
		# a pattern for it may reject and may be in scope.
		"negated namespace on every server, name destination": {"dest": {"name": "prod", "namespace": "kube-system"}, "entries": [{"name": "*", "namespace": "*"}, {"server": "*", "namespace": "!kube-system"}]},
		"negated name, server destination": {"dest": {"server": in_cluster, "namespace": "shop"}, "entries": [{"server": "*", "namespace": "*"}, {"name": "!prod", "namespace": "*"}]},
	}
	not permitted(c.dest, c.entries)
}

test_application_message_and_path if {
	review_app({"server": in_cluster, "namespace": "billing"}, [{"server": "*", "namespace": "shop"}]) == {{
		"rule": "project-destination-denied",
		"msg": `Application "shop" has destination (server "https://kubernetes.default.svc", namespace "billing"), which AppProject "team-a" does not permit; deploy to a destination listed in the project's spec.destinations or add this one there`,
		"path": ["spec", "destination"],
	}}
}

test_application_message_by_name if {
	[v] := [v | some v in review_app({"name": "prod", "namespace": "billing"}, [])]
	contains(v.msg, `destination (name "prod", namespace "billing")`)
	[w] := [w | some w in review_app({}, [])]
	contains(w.msg, `destination (no server or name, namespace "")`)
}

test_application_without_project_skipped if {
	a := app({"server": in_cluster, "namespace": "shop"})
	vs := project_destination_denied.violation with input as {"object": a, "application": a, "context": ctx}
	count(vs) == 0
}

# Rendered objects.

deployment(namespace) := {
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": {"name": "web", "namespace": namespace},
}

review_rendered(obj, cluster_scoped) := vs if {
	vs := project_destination_denied.violation with input as {
		"object": obj,
		"application": app({"server": in_cluster, "namespace": "shop"}),
		"project": project([{"server": in_cluster, "namespace": "shop"}, {"server": in_cluster, "namespace": "shop-*"}]),
		"context": object.union(ctx, {"clusterScoped": cluster_scoped}),
	}
}

test_rendered_object_in_permitted_namespace_allowed if {
	count(review_rendered(deployment("shop"), false)) == 0
	count(review_rendered(deployment("shop-jobs"), false)) == 0
}

test_rendered_object_defaults_to_destination_namespace if {
	count(review_rendered(json.remove(deployment(""), ["metadata/namespace"]), false)) == 0
}

test_rendered_object_outside_destinations_denied if {
	review_rendered(deployment("kube-system"), false) == {{
		"rule": "project-destination-denied",
		"msg": `Deployment "web" of Application "shop" has destination (server "https://kubernetes.default.svc", namespace "kube-system"), which AppProject "team-a" does not permit; deploy it into a namespace the project's spec.destinations list or add this one there`,
		"path": ["metadata", "namespace"],
	}}
}

test_rendered_object_defaulted_into_denied_namespace if {
	obj := json.remove(deployment(""), ["metadata/namespace"])
	vs := project_destination_denied.violation with input as {
		"object": obj,
		"application": app({"server": in_cluster, "namespace": "billing"}),
		"project": project([{"server": in_cluster, "namespace": "shop"}]),
		"context": ctx,
	}
	[v] := [v | some v in vs]
	not v.path
}

test_rendered_cluster_scoped_object_skipped if {
	ns := {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}}
	count(review_rendered(ns, true)) == 0
	count(review_rendered(deployment("kube-system"), true)) == 0
}

test_rendered_object_uses_application_cluster if {
	vs := project_destination_denied.violation with input as {
		"object": deployment("shop"),
		"application": app({"name": "prod", "namespace": "shop"}),
		"project": project([{"server": "*", "namespace": "shop"}]),
		"context": ctx,
	}
	[v] := [v | some v in vs]
	contains(v.msg, `destination (name "prod", namespace "shop")`)
}

test_rendered_child_application_checked if {
	child := object.union(app({"server": in_cluster, "namespace": "shop"}), {"metadata": {"name": "child", "namespace": "argocd"}})
	[v] := [v | some v in review_rendered(child, false)]
	v.path == ["metadata", "namespace"]
	startswith(v.msg, `Application "child" of Application "shop"`)
}

# A child Application is a resource of its parent: where it lands is checked
# against the parent's project, its own spec.destination is not (that is
# checked against its own project when the child itself is reviewed).
test_rendered_child_application_own_destination_not_checked if {
	child := object.union(app({"server": in_cluster, "namespace": "kube-system"}), {"metadata": {"name": "child", "namespace": "shop"}})
	count(review_rendered(child, false)) == 0
}

# namespace_denied answers false, not undefined, when the project permits
# the namespace, so that the evaluator keeps that answer too.
test_namespace_denied[note] if {
	a := app({"server": in_cluster, "namespace": "shop"})
	p := project([{"server": in_cluster, "namespace": "shop"}])
	some note, c in {
		"permitted": {"project": p, "namespace": "shop", "want": false},
		"not permitted": {"project": p, "namespace": "kube-system", "want": true},
		"no namespace": {"project": p, "namespace": "", "want": false},
		"project not an object": {"project": "team-a", "namespace": "kube-system", "want": false},
	}
	project_destination_denied.namespace_denied(a, c.project, c.namespace) == c.want
}
