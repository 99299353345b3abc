# project-source-denied: an Application's repositories must be permitted by
# its AppProject.
#
# What: an Application whose spec.source.repoURL or any
# spec.sources[].repoURL is not permitted by spec.sourceRepos of its
# AppProject. Argo CD's rules apply: URLs and patterns are compared
# normalized (lowercase, scp-style SSH equal to ssh://, one ".git" suffix
# ignored, paths escaped as Go's url package escapes them); a URL is
# permitted when some allow pattern (no leading "!") matches it and no "!"
# pattern rejects it; "*" stops at "/" ("**" does not), and "*" alone
# permits every repository. A "!" pattern never permits on its own (Argo
# CD's documentation; Argo CD itself lets it).
# Why: Argo CD refuses to sync such an Application ("application repo ... is
# not permitted in project ..."); catching it in review saves a broken sync,
# and the project's list is how a platform team keeps unknown repositories
# out of the cluster.
# Fix: use a repository the project lists, or add the repository to the
# project's spec.sourceRepos.
#
# Skipped when the AppProject is unknown (see project-not-found).
package tollgate.builtin.project_source_denied

import data.tollgate.lib

violation contains v if {
	input.object.kind == "Application"
	lib.reviewed_application
	lib.has_project
	some src in sources
	not lib.source_permitted(lib.project_source_patterns, src.repo)
	v := {
		"rule": "project-source-denied",
		"msg": sprintf(
			"Application %q uses source repository %q, which AppProject %q does not permit; use a repository listed in the project's spec.sourceRepos or add this one there",
			[lib.display_name(input.object), src.repo, lib.project_name],
		),
		"path": src.path,
	}
}

# sources are the repository URLs of the Application with their paths.
sources contains {"repo": repo, "path": ["spec", "source", "repoURL"]} if {
	repo := input.object.spec.source.repoURL
	lib.non_empty_string(repo)
}

sources contains {"repo": repo, "path": ["spec", "sources", i, "repoURL"]} if {
	some i, src in input.object.spec.sources
	repo := src.repoURL
	lib.non_empty_string(repo)
}
