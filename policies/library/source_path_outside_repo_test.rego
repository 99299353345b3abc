package tollgate.builtin.source_path_outside_repo_test

import data.tollgate.builtin.source_path_outside_repo

app(spec) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {"name": "shop", "namespace": "argocd"},
	"spec": object.union({"project": "team-a", "destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"}}, spec),
}

violations(obj) := vs if {
	vs := source_path_outside_repo.violation with input as {
		"object": obj,
		"application": obj,
		"context": {"enforcementPoint": "applicationset", "argocdNamespace": "argocd", "clusterScoped": false},
	}
}

test_outside_denied[p] if {
	some p in ["..", "../other-team", "apps/../../etc", "./../x", "a/b/../../../c", "/etc", "/"]
	violations(app({"source": {"repoURL": "https://git.example.com/shop.git", "path": p}})) == {{
		"rule": "source-path-outside-repo",
		"msg": sprintf(`Application "shop" source path %q leaves its repository, which Argo CD refuses to render; give the path relative to the repository root, without ".."`, [p]),
		"path": ["spec", "source", "path"],
	}}
}

test_inside_allowed[p] if {
	some p in ["apps/shop", ".", "./apps", "a/../b", "a/b/../../c", "apps/..", "a//b/../..", "..foo/bar", "apps/..x"]
	count(violations(app({"source": {"repoURL": "https://git.example.com/shop.git", "path": p}}))) == 0
}

test_sources_denied if {
	vs := violations(app({"sources": [
		{"repoURL": "https://git.example.com/shop.git", "path": "apps"},
		{"repoURL": "https://git.example.com/shop.git", "path": "../../x"},
	]}))
	[v.path | some v in vs] == [["spec", "sources", 1, "path"]]
}

test_other_kinds_ignored if {
	count(violations({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "spec": {"source": {"path": "/etc"}}})) == 0
}
