# source-path-outside-repo: an Application's source paths stay inside
# their repository.
#
# What: an Application whose spec.source.path or any spec.sources[].path is
# absolute, or climbs out of the repository with "..": "../other-team",
# "apps/../../etc". Paths that go up and come back down ("a/../b") pass.
# Why: Argo CD refuses to render it ("app path is absolute", "app path
# outside root"). A path built from a template parameter (an ApplicationSet's
# git files generator reads it from a tenant's repository) is how one
# would try to reach another team's checkout on the repo-server's disk.
# Fix: give the path relative to the repository root, without "..".
package tollgate.builtin.source_path_outside_repo

import data.tollgate.lib

violation contains v if {
	input.object.kind == "Application"
	startswith(input.object.apiVersion, "argoproj.io/")
	some src in paths
	outside(src.value)
	v := {
		"rule": "source-path-outside-repo",
		"msg": sprintf(
			"Application %q source path %q leaves its repository, which Argo CD refuses to render; give the path relative to the repository root, without \"..\"",
			[lib.display_name(input.object), src.value],
		),
		"path": src.path,
	}
}

# paths are the source paths of the Application with their field paths.
paths contains {"value": p, "path": ["spec", "source", "path"]} if {
	p := input.object.spec.source.path
	lib.non_empty_string(p)
}

paths contains {"value": p, "path": ["spec", "sources", i, "path"]} if {
	some i, src in input.object.spec.sources
	p := src.path
	lib.non_empty_string(p)
}

outside(p) if startswith(p, "/")

# outside holds when, at some "..", more ".." than named segments came
# before it (and with it).
outside(p) if {
	parts := split(p, "/")
	some i, part in parts
	part == ".."
	ups := count([j | some j, x in parts; j <= i; x == ".."])
	downs := count([j | some j, x in parts; j < i; not x in {"..", ".", ""}])
	ups > downs
}
