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

named(api_version, kind, name) := {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}

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
		"null whitelist is a missing one": {"obj": obj("apps/v1", "Deployment"), "spec": {"namespaceResourceWhitelist": null}},
		"whitelisted": {"obj": obj("apps/v1", "Deployment"), "spec": {"namespaceResourceWhitelist": [{"group": "apps", "kind": "*"}]}},
		"core whitelisted": {"obj": obj("v1", "ConfigMap"), "spec": {"namespaceResourceWhitelist": [{"group": "", "kind": "ConfigMap"}]}},
		"blacklist for another kind": {"obj": obj("v1", "ConfigMap"), "spec": {"namespaceResourceBlacklist": [{"group": "", "kind": "ResourceQuota"}]}},
		"blacklist for another group": {"obj": obj("v1", "Secret"), "spec": {"namespaceResourceBlacklist": [{"group": "example.com", "kind": "Secret"}]}},
		"cluster whitelist irrelevant": {"obj": obj("v1", "ConfigMap"), "spec": {"clusterResourceWhitelist": []}},
		"name of a whitelist entry ignored": {"obj": obj("v1", "ConfigMap"), "spec": {"namespaceResourceWhitelist": [{"group": "", "kind": "ConfigMap", "name": "other"}]}},
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

test_namespaced_empty_whitelist_denied if {
	violations(obj("v1", "ConfigMap"), {"namespaceResourceWhitelist": []}, false) == {{
		"rule": "project-resource-denied",
		"msg": `ConfigMap "x" of Application "shop" is a namespaced resource "ConfigMap" (core group) and AppProject "team-a" has an empty spec.namespaceResourceWhitelist, so it permits no namespaced resources (without the field it would permit all); drop it from the Application or ask the project's owners to whitelist {group: "", kind: "ConfigMap"}`,
		"path": ["kind"],
	}}
}

test_namespaced_blacklist_entry_name_ignored_denied if {
	spec := {"namespaceResourceBlacklist": [{"group": "", "kind": "Secret", "name": "other"}]}
	count(violations(obj("v1", "Secret"), spec, false)) == 1
}

# Argo CD tells a list the API server stores as [] from one it does not
# store: IsGroupKindNamePermitted compares the namespace whitelist with nil.
test_missing_and_empty_lists[note] if {
	some note, c in {
		"cluster whitelist missing denies": {"spec": {}, "cluster_scoped": true, "denied": true},
		"cluster whitelist empty denies": {"spec": {"clusterResourceWhitelist": []}, "cluster_scoped": true, "denied": true},
		"cluster blacklist missing permits": {"spec": {"clusterResourceWhitelist": [{"group": "*", "kind": "*"}]}, "cluster_scoped": true, "denied": false},
		"cluster blacklist empty permits": {"spec": {"clusterResourceWhitelist": [{"group": "*", "kind": "*"}], "clusterResourceBlacklist": []}, "cluster_scoped": true, "denied": false},
		"namespace whitelist missing permits": {"spec": {}, "cluster_scoped": false, "denied": false},
		"namespace whitelist empty denies": {"spec": {"namespaceResourceWhitelist": []}, "cluster_scoped": false, "denied": true},
		"namespace blacklist missing permits": {"spec": {}, "cluster_scoped": false, "denied": false},
		"namespace blacklist empty permits": {"spec": {"namespaceResourceBlacklist": []}, "cluster_scoped": false, "denied": false},
	}
	denied := count(violations(obj("v1", "Thing"), c.spec, c.cluster_scoped)) > 0
	denied == c.denied
}

# Argo CD 3.x cluster resource lists take a name pattern per entry.
test_cluster_scoped_name_patterns[note] if {
	some note, c in {
		"whitelisted name glob permits": {"name": "team1-web", "spec": {"clusterResourceWhitelist": [{"group": "", "kind": "Namespace", "name": "team1-*"}]}, "denied": false},
		"whitelisted exact name permits": {"name": "team1", "spec": {"clusterResourceWhitelist": [{"group": "", "kind": "Namespace", "name": "team1"}]}, "denied": false},
		"whitelist entry without name permits every name": {"name": "team2-web", "spec": {"clusterResourceWhitelist": [{"group": "", "kind": "Namespace"}]}, "denied": false},
		"whitelist entry with empty name permits every name": {"name": "team2-web", "spec": {"clusterResourceWhitelist": [{"group": "", "kind": "Namespace", "name": ""}]}, "denied": false},
		"other name in whitelist denies": {"name": "team2-web", "spec": {"clusterResourceWhitelist": [{"group": "", "kind": "Namespace", "name": "team1-*"}]}, "denied": true},
		"second whitelist entry names it permits": {
			"name": "team2-web", "spec": {"clusterResourceWhitelist": [
				{"group": "", "kind": "Namespace", "name": "team1-*"},
				{"group": "", "kind": "Namespace", "name": "team2-*"},
			]},
			"denied": false,
		},
		"name pattern has no alternatives denies": {"name": "team1", "spec": {"clusterResourceWhitelist": [{"group": "", "kind": "Namespace", "name": "{team1,team2}"}]}, "denied": true},
		"name class permits": {"name": "team1", "spec": {"clusterResourceWhitelist": [{"group": "", "kind": "Namespace", "name": "team[12]"}]}, "denied": false},
		"blacklisted name glob denies": {
			"name": "kube-system", "spec": {
				"clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
				"clusterResourceBlacklist": [{"group": "", "kind": "Namespace", "name": "kube-*"}],
			},
			"denied": true,
		},
		"blacklist for another name permits": {
			"name": "team1", "spec": {
				"clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
				"clusterResourceBlacklist": [{"group": "", "kind": "Namespace", "name": "kube-*"}],
			},
			"denied": false,
		},
		"blacklist entry without name denies every name": {
			"name": "team1", "spec": {
				"clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
				"clusterResourceBlacklist": [{"group": "", "kind": "Namespace"}],
			},
			"denied": true,
		},
	}
	denied := count(violations(named("v1", "Namespace", c.name), c.spec, true)) > 0
	denied == c.denied
}

test_cluster_scoped_whitelisted_for_other_names_denied if {
	spec := {"clusterResourceWhitelist": [{"group": "", "kind": "Namespace", "name": "team1-*"}]}
	violations(named("v1", "Namespace", "team2-web"), spec, true) == {{
		"rule": "project-resource-denied",
		"msg": `Namespace "team2-web" of Application "shop" is a cluster-scoped resource "Namespace" (core group) that AppProject "team-a" lists in spec.clusterResourceWhitelist for other names only; drop it from the Application or ask the project's owners to whitelist {group: "", kind: "Namespace", name: "team2-web"}`,
		"path": ["kind"],
	}}
}

# An object without a name (generateName) has the name "" to Argo CD: only
# entries without a name pattern match it.
test_cluster_scoped_unnamed_object[note] if {
	unnamed := {"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "team1-"}}
	some note, c in {
		"entry without name permits": {"list": [{"group": "", "kind": "Namespace"}], "denied": false},
		"name glob denies": {"list": [{"group": "", "kind": "Namespace", "name": "team1-*"}], "denied": true},
	}
	denied := count(violations(unnamed, {"clusterResourceWhitelist": c.list}, true)) > 0
	denied == c.denied
}

# Resource list patterns are Go filepath.Match patterns, not the globs of
# destinations and sources: no "{a,b}", "[^...]" negates a class.
test_resource_list_pattern_syntax[note] if {
	some note, c in {
		"braces are literal in a whitelist, denied": {"obj": obj("rbac.authorization.k8s.io/v1", "Role"), "spec": {"namespaceResourceWhitelist": [{"group": "*", "kind": "{Role,RoleBinding}"}]}, "denied": true},
		"braces are literal in a blacklist, permitted": {"obj": obj("rbac.authorization.k8s.io/v1", "Role"), "spec": {"namespaceResourceBlacklist": [{"group": "*", "kind": "{Role,RoleBinding}"}]}, "denied": false},
		"caret class negation, denied": {"obj": obj("v1", "Secret"), "spec": {"namespaceResourceBlacklist": [{"group": "", "kind": "[^C]*"}]}, "denied": true},
		"caret class negation, permitted": {"obj": obj("v1", "ConfigMap"), "spec": {"namespaceResourceBlacklist": [{"group": "", "kind": "[^C]*"}]}, "denied": false},
		"question mark, denied": {"obj": obj("v1", "Secret"), "spec": {"namespaceResourceBlacklist": [{"group": "", "kind": "Secre?"}]}, "denied": true},
		"malformed pattern matches nothing, permitted": {"obj": obj("v1", "Secret"), "spec": {"namespaceResourceBlacklist": [{"group": "", "kind": "Secret["}]}, "denied": false},
	}
	denied := count(violations(c.obj, c.spec, false)) > 0
	denied == c.denied
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

# The list functions answer false, not undefined, in the common case, so
# that the evaluator keeps that answer too.
test_cluster_whitelist_denies[note] if {
	some note, c in {
		"listed": {"kind": "ClusterRole", "version": "rbac.authorization.k8s.io/v1", "name": "x", "list": [{"group": "rbac.authorization.k8s.io", "kind": "*"}], "want": false},
		"not listed": {"kind": "ClusterRole", "version": "rbac.authorization.k8s.io/v1", "name": "x", "list": [{"group": "", "kind": "Namespace"}], "want": true},
		"listed by name": {"kind": "Namespace", "version": "v1", "name": "team1", "list": [{"kind": "Namespace", "name": "team*"}], "want": false},
		"listed for another name": {"kind": "Namespace", "version": "v1", "name": "kube-system", "list": [{"kind": "Namespace", "name": "team*"}], "want": true},
		"empty whitelist is rule (a)'s": {"kind": "Namespace", "version": "v1", "name": "x", "list": [], "want": false},
		"whitelist not a list": {"kind": "Namespace", "version": "v1", "name": "x", "list": {"group": "", "kind": "x"}, "want": false},
		"kind not a string": {"kind": 7, "version": "v1", "name": "x", "list": [{"group": "", "kind": "Namespace"}], "want": false},
	}
	project_resource_denied.cluster_whitelist_denies(c.kind, c.version, c.name, c.list) == c.want
}

test_namespace_whitelist_denies[note] if {
	some note, c in {
		"listed": {"kind": "Deployment", "version": "apps/v1", "list": [{"group": "apps", "kind": "*"}], "want": false},
		"not listed": {"kind": "Deployment", "version": "apps/v1", "list": [{"group": "", "kind": "ConfigMap"}], "want": true},
		"core group": {"kind": "ConfigMap", "version": "v1", "list": [{"kind": "ConfigMap"}], "want": false},
		"empty whitelist": {"kind": "Deployment", "version": "apps/v1", "list": [], "want": true},
		"null whitelist": {"kind": "Deployment", "version": "apps/v1", "list": null, "want": false},
		"whitelist not a list": {"kind": "Deployment", "version": "apps/v1", "list": {"group": "", "kind": "x"}, "want": false},
		"kind not a string": {"kind": 7, "version": "apps/v1", "list": [{"group": "", "kind": "ConfigMap"}], "want": false},
		"empty kind": {"kind": "", "version": "apps/v1", "list": [{"group": "", "kind": "ConfigMap"}], "want": false},
	}
	project_resource_denied.namespace_whitelist_denies(c.kind, c.version, c.list) == c.want
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

test_named_listed[note] if {
	some note, c in {
		"listed by name": {"name": "kube-system", "list": [{"group": "", "kind": "Namespace", "name": "kube-*"}], "want": true},
		"listed without name": {"name": "team1", "list": [{"group": "", "kind": "Namespace"}], "want": true},
		"listed for another name": {"name": "team1", "list": [{"group": "", "kind": "Namespace", "name": "kube-*"}], "want": false},
		"name pattern not a string": {"name": "team1", "list": [{"group": "", "kind": "Namespace", "name": 1}], "want": false},
	}
	project_resource_denied.named_listed("Namespace", "v1", c.name, c.list) == c.want
}
