# project-not-found: an Application's AppProject must exist.
#
# What: an Application whose spec.project (the "default" project when empty)
# names an AppProject the caller could not find. The caller always supplies
# the implicit "default" project, so this fires only for named projects.
# Why: Argo CD does not reconcile an Application of a missing project; it
# reports "AppProject ... not found" and deploys nothing.
# Fix: create the AppProject (in the same change or first), or set
# spec.project to an existing project.
package tollgate.builtin.project_not_found

import data.tollgate.lib

violation contains v if {
	input.object.kind == "Application"
	lib.reviewed_application
	not lib.has_project
	v := object.union(
		{
			"rule": "project-not-found",
			"msg": sprintf(
				"Application %q uses AppProject %q, which does not exist; create the AppProject or set spec.project to an existing project",
				[lib.display_name(input.object), lib.app_project(input.object)],
			),
		},
		project_path,
	)
}

project_path := {"path": ["spec", "project"]} if {
	lib.non_empty_string(input.object.spec.project)
} else := {}
