package tollgate.builtin.project_resource_denied_test

import data.tollgate.builtin.project_resource_denied

application := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {"name": "shop", "namespace": "argocd"},
	"spec": {"project": "team-a", "destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"}},
}

project(spec) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "AppProject",
	"metadata": {"name": "team-a", "namespace": "argocd"},
	"spec": object.union({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}]}, spec),
}

obj(api_version, kind) := {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}

violations(o, spec, cluster_scoped) := vs if {
	vs := project_resource_denied.violation with input as {
		"object": o,
		"application": application,
		"project": project(spec),
		"context": {"enforcementPoint": "sync", "argocdNamespace": "argocd", "clusterScoped": cluster_scoped},
	}
}

# Cluster-scoped resources.

test_cluster_scoped_permitted[note] if {
	some note, c in {
		"star whitelist": {"obj": obj("rbac.authorization.k8s.io/v1", "ClusterRole"), "spec": {"clusterResourceWhitelist": [{"group": "*", "kind": "*"}]}},
		"exact entry": {"obj": obj("rbac.authorization.k8s.io/v1", "ClusterRole"), "spec": {"clusterResourceWhitelist": [{"group": "rbac.authorization.k8s.io", "kind": "ClusterRole"}]}},
		"core group": {"obj": obj("v1", "Namespace"), "spec": {"clusterResourceWhitelist": [{"group": "", "kind": "Namespace"}]}},
		"group glob": {"obj": obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), "spec": {"clusterResourceWhitelist": [{"group": "rbac.*", "kind": "Cluster*"}]}},
		"blacklist for another kind": {"obj": obj("v1", "Namespace"), "spec": {
			"clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
			"clusterResourceBlacklist": [{"group": "rbac.authorization.k8s.io", "kind": "*"}],
		}},
	}
	count(violations(c.obj, c.spec, true)) == 0
}

test_cluster_scoped_without_whitelist_denied[note] if {
	some note, spec in {"missing": {}, "empty": {"clusterResourceWhitelist": []}}
	violations(obj("rbac.authorization.k8s.io/v1", "ClusterRole"), spec, true) == {{
		"rule": "project-resource-denied",
		"msg": `ClusterRole "x" of Application "shop" is a cluster-scoped resource "rbac.authorization.k8s.io/ClusterRole" and AppProject "team-a" has no spec.clusterResourceWhitelist, so it permits no cluster-scoped resources; drop it from the Application or ask the project's owners to whitelist {group: "rbac.authorization.k8s.io", kind: "ClusterRole"}`,
		"path": ["kind"],
	}}
}

test_cluster_scoped_not_whitelisted_denied if {
	spec := {"clusterResourceWhitelist": [{"group": "", "kind": "Namespace"}]}
	violations(obj("rbac.authorization.k8s.io/v1", "ClusterRole"), spec, true) == {{
		"rule": "project-resource-denied",
		"msg": `ClusterRole "x" of Application "shop" is a cluster-scoped resource "rbac.authorization.k8s.io/ClusterRole" that AppProject "team-a" does not list in spec.clusterResourceWhitelist; drop it from the Application or ask the project's owners to whitelist {group: "rbac.authorization.k8s.io", kind: "ClusterRole"}`,
		"path": ["kind"],
	}}
}

test_cluster_scoped_core_group_needs_empty_group if {
	spec := {"clusterResourceWhitelist": [{"group": "core", "kind": "Namespace"}]}
	[v] := [v | some v in violations(obj("v1", "Namespace"), spec, true)]
	contains(v.msg, `cluster-scoped resource "Namespace" (core group)`)
}

test_cluster_scoped_blacklisted_denied[note] if {
	some note, blacklist in {
		"exact": [{"group": "rbac.authorization.k8s.io", "kind": "ClusterRole"}],
		"kind glob": [{"group": "rbac.authorization.k8s.io", "kind": "*"}],
		"group glob": [{"group": "*.k8s.io", "kind": "ClusterRole"}],
	}
	spec := {"clusterResourceWhitelist": [{"group": "*", "kind": "*"}], "clusterResourceBlacklist": blacklist}
	[v] := [v | some v in violations(obj("rbac.authorization.k8s.io/v1", "ClusterRole"), spec, true)]
	endswith(v.msg, `that AppProject "team-a" blacklists in spec.clusterResourceBlacklist; drop it from the Application or ask the project's owners to lift the blacklist entry`)
}

# Namespaced resources.

test_namespaced_permitted[note] if {
	some note, c in {
		"no lists": {"obj": obj("apps/v1", "Deployment"), "spec": {}},
		"empty whitelist means no restriction": {"obj": obj("apps/v1", "Deployment"), "spec": {"namespaceResourceWhitelist": []}},
		"whitelisted": {"obj": obj("apps/v1", "Deployment"), "spec": {"namespaceResourceWhitelist": [{"group": "apps", "kind": "*"}]}},
		"core whitelisted": {"obj": obj("v1", "ConfigMap"), "spec": {"namespaceResourceWhitelist": [{"group": "", "kind": "ConfigMap"}]}},
		"blacklist for another kind": {"obj": obj("v1", "ConfigMap"), "spec": {"namespaceResourceBlacklist": [{"group": "", "kind": "ResourceQuota"}]}},
		"blacklist for another group": {"obj": obj("v1", "Secret"), "spec": {"namespaceResourceBlacklist": [{"group": "example.com", "kind": "Secret"}]}},
		"cluster whitelist irrelevant": {"obj": obj("v1", "ConfigMap"), "spec": {"clusterResourceWhitelist": []}},
	}
	count(violations(c.obj, c.spec, false)) == 0
}

test_namespaced_blacklisted_denied if {
	spec := {"namespaceResourceBlacklist": [{"group": "", "kind": "ResourceQuota"}, {"group": "networking.k8s.io", "kind": "Network*"}]}
	violations(obj("networking.k8s.io/v1", "NetworkPolicy"), spec, false) == {{
		"rule": "project-resource-denied",
		"msg": `NetworkPolicy "x" of Application "shop" is a namespaced resource "networking.k8s.io/NetworkPolicy" that AppProject "team-a" blacklists in spec.namespaceResourceBlacklist; drop it from the Application or ask the project's owners to lift the blacklist entry`,
		"path": ["kind"],
	}}
}

test_namespaced_not_whitelisted_denied if {
	spec := {"namespaceResourceWhitelist": [{"group": "apps", "kind": "Deployment"}, {"group": "", "kind": "*"}]}
	[v] := [v | some v in violations(obj("batch/v1", "CronJob"), spec, false)]
	v.msg == `CronJob "x" of Application "shop" is a namespaced resource "batch/CronJob" that AppProject "team-a" does not list in spec.namespaceResourceWhitelist; drop it from the Application or ask the project's owners to whitelist {group: "batch", kind: "CronJob"}`
}

test_namespaced_whitelisted_and_blacklisted_denied if {
	spec := {
		"namespaceResourceWhitelist": [{"group": "*", "kind": "*"}],
		"namespaceResourceBlacklist": [{"group": "", "kind": "Secret"}],
	}
	count(violations(obj("v1", "Secret"), spec, false)) == 1
}

# When the rule does not apply.

test_application_itself_ignored if {
	vs := project_resource_denied.violation with input as {
		"object": application,
		"application": application,
		"project": project({"namespaceResourceWhitelist": [{"group": "", "kind": "ConfigMap"}]}),
		"context": {"enforcementPoint": "cli", "argocdNamespace": "argocd", "clusterScoped": false},
	}
	count(vs) == 0
}

test_child_application_checked if {
	child := object.union(application, {"metadata": {"name": "child"}})
	[v] := [v | some v in violations(child, {"namespaceResourceWhitelist": [{"group": "", "kind": "ConfigMap"}]}, false)]
	contains(v.msg, `"argoproj.io/Application"`)
}

test_without_application_or_project_ignored if {
	o := obj("rbac.authorization.k8s.io/v1", "ClusterRole")
	ctx := {"enforcementPoint": "admission", "argocdNamespace": "argocd", "clusterScoped": true}
	count(project_resource_denied.violation) == 0 with input as {"object": o, "context": ctx}
	count(project_resource_denied.violation) == 0 with input as {"object": o, "application": application, "context": ctx}
}

test_object_without_kind_ignored if {
	count(violations({"apiVersion": "v1", "metadata": {"name": "x"}}, {}, true)) == 0
}

# whitelist_denies and listed answer false, not undefined, in the common
# case, so that the evaluator keeps that answer too.
test_whitelist_denies[note] if {
	some note, c in {
		"listed": {"kind": "Deployment", "version": "apps/v1", "list": [{"group": "apps", "kind": "*"}], "want": false},
		"not listed": {"kind": "Deployment", "version": "apps/v1", "list": [{"group": "", "kind": "ConfigMap"}], "want": true},
		"core group": {"kind": "ConfigMap", "version": "v1", "list": [{"kind": "ConfigMap"}], "want": false},
		"empty whitelist": {"kind": "Deployment", "version": "apps/v1", "list": [], "want": false},
		"whitelist not a list": {"kind": "Deployment", "version": "apps/v1", "list": {"group": "", "kind": "x"}, "want": false},
		"kind not a string": {"kind": 7, "version": "apps/v1", "list": [{"group": "", "kind": "ConfigMap"}], "want": false},
		"empty kind": {"kind": "", "version": "apps/v1", "list": [{"group": "", "kind": "ConfigMap"}], "want": false},
	}
	project_resource_denied.whitelist_denies(c.kind, c.version, c.list) == c.want
}

test_listed[note] if {
	some note, c in {
		"listed": {"kind": "ResourceQuota", "version": "v1", "list": [{"group": "", "kind": "ResourceQuota"}], "want": true},
		"not listed": {"kind": "Deployment", "version": "apps/v1", "list": [{"group": "", "kind": "ResourceQuota"}], "want": false},
		"list not a list": {"kind": "ResourceQuota", "version": "v1", "list": "ResourceQuota", "want": false},
		"apiVersion not a string": {"kind": "ResourceQuota", "version": 1, "list": [{"group": "", "kind": "ResourceQuota"}], "want": false},
	}
	project_resource_denied.listed(c.kind, c.version, c.list) == c.want
}
