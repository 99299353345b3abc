package tollgate.builtin.project_source_denied_test

import data.tollgate.builtin.project_source_denied

app(spec) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {"name": "shop", "namespace": "argocd"},
	"spec": object.union({"project": "team-a", "destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"}}, spec),
}

single(repo) := app({"source": {"repoURL": repo, "path": "deploy"}})

project(repos) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "AppProject",
	"metadata": {"name": "team-a", "namespace": "argocd"},
	"spec": {"sourceRepos": repos, "destinations": [{"server": "*", "namespace": "*"}]},
}

violations(a, repos) := vs if {
	vs := project_source_denied.violation with input as {
		"object": a,
		"application": a,
		"project": project(repos),
		"context": {"enforcementPoint": "cli", "argocdNamespace": "argocd", "clusterScoped": false},
	}
}

test_permitted_sources[note] if {
	some note, c in {
		"star": {"repo": "https://github.com/org/shop", "repos": ["*"]},
		"exact": {"repo": "https://github.com/org/shop", "repos": ["https://github.com/org/shop"]},
		"case and .git ignored": {"repo": "https://GitHub.com/Org/Shop.git", "repos": ["https://github.com/org/shop"]},
		"pattern with .git": {"repo": "https://github.com/org/shop", "repos": ["https://github.com/org/shop.git"]},
		"segment glob": {"repo": "https://github.com/org/shop", "repos": ["https://github.com/org/*"]},
		"double star crosses segments": {"repo": "https://gitlab.com/org/group/shop", "repos": ["https://gitlab.com/org/**"]},
		"scp form against ssh form": {"repo": "git@github.com:org/shop.git", "repos": ["ssh://git@github.com/org/shop"]},
		"ssh form against scp form": {"repo": "ssh://git@github.com/org/shop.git", "repos": ["git@github.com:org/*"]},
		"negation beside star": {"repo": "https://github.com/org/shop", "repos": ["*", "!https://github.com/evil/*"]},
		"helm repository": {"repo": "https://charts.bitnami.com/bitnami", "repos": ["https://charts.bitnami.com/*"]},
		"spaces trimmed": {"repo": " https://github.com/org/shop ", "repos": ["https://github.com/org/shop"]},
		"negated alternatives for other repositories": {"repo": "https://github.com/org/shop", "repos": ["*", "!https://github.com/{evil,bad}/*"]},
		# Argo CD escapes the path of a pattern with "{" (url.URL.String),
		# so its "!" rejects nothing.
		"negated alternatives reject nothing": {"repo": "https://github.com/bad/tool", "repos": ["*", "!https://github.com/{evil,bad}/*"]},
		"negation of another depth": {"repo": "https://github.com/evil/group/tool", "repos": ["**", "!https://github.com/evil/*"]},
	}
	count(violations(single(c.repo), c.repos)) == 0
}

test_denied_sources[note] if {
	some note, c in {
		"not listed": {"repo": "https://github.com/other/shop", "repos": ["https://github.com/org/*"]},
		"single star stays in one segment": {"repo": "https://gitlab.com/org/group/shop", "repos": ["https://gitlab.com/org/*"]},
		"negated": {"repo": "https://github.com/evil/tool", "repos": ["*", "!https://github.com/evil/*"]},
		"negation first": {"repo": "https://github.com/evil/tool", "repos": ["!https://github.com/evil/*", "*"]},
		"negated with .git": {"repo": "https://github.com/evil/tool.git", "repos": ["*", "!https://github.com/EVIL/tool.git"]},
		"empty list": {"repo": "https://github.com/org/shop", "repos": []},
		"trailing slash differs": {"repo": "https://github.com/org/shop/", "repos": ["https://github.com/org/shop"]},
		"prefix is not a match": {"repo": "https://github.com/org/shop-fork", "repos": ["https://github.com/org/shop"]},
		# Argo CD escapes the path of a pattern with "{": it matches nothing.
		"alternatives match nothing": {"repo": "https://github.com/org/billing", "repos": ["https://github.com/org/{shop,billing}"]},
		"two negations, second rejects": {"repo": "https://gitlab.com/group/tool", "repos": ["**", "!https://github.com/evil/*", "!https://gitlab.com/group/**"]},
		# A difference from Argo CD, which permits it (see docs/policies.md).
		"lone negation permits nothing": {"repo": "https://github.com/org/shop", "repos": ["!https://github.com/evil/*"]},
	}
	count(violations(single(c.repo), c.repos)) == 1
}

test_message_and_path if {
	violations(single("https://github.com/other/shop"), ["https://github.com/org/*"]) == {{
		"rule": "project-source-denied",
		"msg": `Application "shop" uses source repository "https://github.com/other/shop", which AppProject "team-a" does not permit; use a repository listed in the project's spec.sourceRepos or add this one there`,
		"path": ["spec", "source", "repoURL"],
	}}
}

test_multi_source if {
	a := app({"sources": [
		{"repoURL": "https://github.com/org/shop", "path": "deploy"},
		{"repoURL": "https://charts.example.com/stable", "chart": "redis", "targetRevision": "1.0.0"},
		{"repoURL": "https://github.com/org/values", "ref": "values"},
	]})
	{v.path | some v in violations(a, ["https://github.com/org/*"])} == {["spec", "sources", 1, "repoURL"]}
}

test_source_and_sources_both_checked if {
	a := app({
		"source": {"repoURL": "https://github.com/other/a"},
		"sources": [{"repoURL": "https://github.com/other/b"}],
	})
	{v.path | some v in violations(a, ["https://github.com/org/*"])} == {
		["spec", "source", "repoURL"],
		["spec", "sources", 0, "repoURL"],
	}
}

test_without_project_skipped if {
	a := single("https://github.com/other/shop")
	vs := project_source_denied.violation with input as {
		"object": a,
		"application": a,
		"context": {"enforcementPoint": "cli", "argocdNamespace": "argocd", "clusterScoped": false},
	}
	count(vs) == 0
}

test_non_applications_ignored if {
	cm := {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "spec": {"source": {"repoURL": "https://x"}}}
	count(violations(cm, [])) == 0
}

test_source_without_repo_skipped if {
	count(violations(app({"source": {"path": "deploy"}}), [])) == 0
}
