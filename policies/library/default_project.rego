# default-project: Applications belong to a scoped AppProject.
#
# What: an Application whose spec.project is "default" or empty (which means
# "default").
# Why: the default project permits every repository, every destination and
# every cluster-scoped resource unless an administrator has narrowed it, so
# an Application in it escapes the guard rails a team's project sets.
# Fix: create an AppProject for the team, with its repositories,
# destinations and resource kinds, and set spec.project to it.
package tollgate.builtin.default_project

import data.tollgate.lib

violation contains v if {
	input.object.kind == "Application"
	startswith(input.object.apiVersion, "argoproj.io/")
	lib.app_project(input.object) == "default"
	v := object.union(
		{
			"rule": "default-project",
			"msg": sprintf(
				"Application %q uses the \"default\" AppProject, which permits every repository, destination and cluster-scoped resource; create an AppProject scoped to the team and set spec.project to it",
				[lib.display_name(input.object)],
			),
		},
		project_path,
	)
}

project_path := {"path": ["spec", "project"]} if {
	lib.non_empty_string(input.object.spec.project)
} else := {}
