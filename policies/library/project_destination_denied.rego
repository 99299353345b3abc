# project-destination-denied: an Application and what it renders must stay
# within the destinations its AppProject permits.
#
# What: (a) an Application whose spec.destination is not permitted by its
# AppProject's spec.destinations; (b) a namespaced object rendered by an
# Application whose namespace (metadata.namespace, defaulted to the
# Application's destination namespace) is not permitted on the Application's
# destination cluster. Argo CD's rules apply (see lib.destination_permitted):
# an entry matches when its server pattern matches the destination server
# (if set) or its name pattern matches the destination name (if set), and
# its namespace pattern matches; an allow entry (no "!" pattern) must match
# and no deny entry may reject the destination where the rest of the entry
# matches. A deny entry never permits on its own (Argo CD's documentation;
# Argo CD itself lets it).
# Why: Argo CD refuses to sync the Application ("application destination
# ... is not permitted in project ...") or the object ("namespace ... is
# not permitted in project ..."); catching it in review saves a broken sync,
# and destinations are how a platform team keeps a team in its namespaces.
# Fix: deploy into a namespace the project permits, or add the destination
# to the project's spec.destinations.
#
# Skipped when the AppProject is unknown (see project-not-found).
package tollgate.builtin.project_destination_denied

import data.tollgate.lib

# (a) The Application's destination.

violation contains v if {
	input.object.kind == "Application"
	startswith(input.object.apiVersion, "argoproj.io/")
	is_object(input.project)
	lib.reviewed_application
	dest := lib.destination_of(input.object)
	not lib.destination_permitted(lib.project_destinations, lib.resolved_destination(dest))
	v := {
		"rule": "project-destination-denied",
		"msg": sprintf(
			"Application %q has destination (%s), which AppProject %q does not permit; deploy to a destination listed in the project's spec.destinations or add this one there",
			[lib.display_name(input.object), lib.describe_destination(dest), lib.project_name],
		),
		"path": ["spec", "destination"],
	}
}

# (b) Rendered namespaced objects.

violation contains v if {
	input.application.kind == "Application"
	input.context.clusterScoped == false
	[ns, path] := lib.rendered_namespace

	# lib.rendered, in one step: input.application is an object (it has a
	# kind).
	input.object != input.application
	namespace_denied(input.application, input.project, ns)
	v := rendered_violation(ns, path)
}

# rendered_violation is the violation of (b) for a rendered object landing
# in namespace ns; path is {"path": ...} when the object names ns itself.
# (Built apart from the rule, whose evaluation then needs fewer variables.)
rendered_violation(ns, path) := object.union(
	{
		"rule": "project-destination-denied",
		"msg": sprintf(
			"%s of Application %q has destination (%s), which AppProject %q does not permit; deploy it into a namespace the project's spec.destinations list or add this one there",
			[lib.describe(input.object), lib.application_name, lib.describe_destination(dest), lib.project_name],
		),
	},
	path,
) if {
	app_dest := lib.app_destination
	dest := {"server": app_dest.server, "name": app_dest.name, "namespace": ns}
}

# namespace_denied is true when namespace is set and project is an
# AppProject (an object) whose spec.destinations do not permit namespace on
# app's destination cluster, else false. A pure function: the evaluator
# keeps every answer, the common false too, across reviews.
namespace_denied(app, project, namespace) if {
	namespace != ""
	is_object(project)
	not lib.namespace_permitted(app, project, namespace)
} else := false
