# Shared helpers for the built-in rules: object identity, API groups and the
# review context. Every function here tolerates malformed input (a number
# where a string belongs, a missing metadata block) by being undefined or by
# returning a neutral value, so a broken manifest never makes a rule error.
#
# The other lib_*.rego files extend this package: lib_glob.rego (Argo CD glob
# matching), lib_images.rego (image references), lib_pods.rego (pod specs
# and containers), lib_project.rego (AppProject permission checks).
package tollgate.lib

# str returns obj[key] when it is a string, else "".
str(obj, key) := s if {
	s := obj[key]
	is_string(s)
} else := ""

# non_empty_string holds when x is a string with something besides spaces.
non_empty_string(x) if {
	is_string(x)
	trim_space(x) != ""
}

# api_group returns the group of an apiVersion: "apps" for "apps/v1", "" for
# the core group ("v1") and for anything that is not a string.
api_group(api_version) := group if {
	is_string(api_version)
	i := indexof(api_version, "/")
	i >= 0
	group := substring(api_version, 0, i)
} else := ""

# group_of returns the API group of a Kubernetes object; undefined when it
# has no apiVersion, so that kind checks fail for it.
group_of(obj) := api_group(obj.apiVersion)

# object_group is the API group of input.object, computed once per review
# (group_of inlined: this runs for every object); undefined when the object
# has no apiVersion.
object_group := substring(version, 0, i) if {
	version := input.object.apiVersion
	is_string(version)
	i := indexof(version, "/")
	i >= 0
} else := "" if {
	is_string(input.object.apiVersion)
}

# object_namespace is input.object's metadata.namespace, "" when unset.
object_namespace := namespace_of(input.object)

# name_of returns metadata.name, or "" when it is missing.
name_of(obj) := name if {
	name := obj.metadata.name
	is_string(name)
} else := ""

# namespace_of returns metadata.namespace, or "" when it is missing.
namespace_of(obj) := ns if {
	ns := obj.metadata.namespace
	is_string(ns)
} else := ""

# display_name names an object for a message: its name, else its
# generateName followed by "*", else "(unnamed)".
display_name(obj) := name if {
	name := name_of(obj)
	name != ""
} else := concat("", [prefix, "*"]) if {
	prefix := obj.metadata.generateName
	non_empty_string(prefix)
} else := "(unnamed)"

# describe names an object as its kind and name, e.g. `Deployment "web"`.
describe(obj) := sprintf("%s %q", [kind, display_name(obj)]) if {
	kind := obj.kind
	non_empty_string(kind)
} else := sprintf("object %q", [display_name(obj)])

# describe_group_kind names a resource type as Argo CD's project lists do:
# `"apps/Deployment"`, or `"Namespace" (core group)` for the core group.
describe_group_kind(group, kind) := sprintf("%q (core group)", [kind]) if {
	group == ""
} else := sprintf("%q", [concat("/", [group, kind])])

# argocd_namespace is the namespace Argo CD runs in; "argocd" when the caller
# did not say.
default argocd_namespace := "argocd"

argocd_namespace := ns if {
	ns := input.context.argocdNamespace
	non_empty_string(ns)
}

# object_is_argocd_kind holds when input.object is one of the Argo CD kinds
# that live in the Argo CD namespace by design: Application, ApplicationSet
# and AppProject.
object_is_argocd_kind if {
	input.object.kind in {"Application", "ApplicationSet", "AppProject"}
	object_group == "argoproj.io"
}

# rendered holds when input.object is a manifest that input.application
# renders (or claims), not the Application itself.
rendered if {
	is_object(input.application)
	not self_application
}

# reviewed_application holds when input.object is an Application judged as
# such, with input.project as its own AppProject: not a child Application
# rendered by a parent (input.application is then the parent, and
# input.project the parent's project).
reviewed_application if {
	input.object.kind == "Application"
	object_group == "argoproj.io"
	not rendered
}

# self_application holds when input.object is input.application.
self_application if {
	input.object.kind == "Application"
	object_group == "argoproj.io"
	input.object == input.application
}

# application_name is the name of input.application, for messages.
application_name := display_name(input.application)

# has_project holds when the caller resolved input.application's AppProject.
# (Write `not has_project`, never `not is_object(input.project)`: a call on an
# undefined reference is undefined even under `not`.)
has_project if is_object(input.project)

# project_name is the name of input.project, for messages.
project_name := display_name(input.project)

# app_destination is input.application's spec.destination as
# {"server", "name", "namespace"}, each "" when unset.
app_destination := destination_of(input.application)

# rendered_namespace is the namespace of a rendered object under review,
# defaulted to its Application's destination namespace, paired with the path
# a violation cites: {"path": ["metadata", "namespace"]}, or {} when the
# namespace was defaulted (the object has no such field).
rendered_namespace := [ns, {"path": ["metadata", "namespace"]}] if {
	ns := object_namespace
	ns != ""
} else := [app_destination.namespace, {}]

# destination_of returns an Application's spec.destination as
# {"server", "name", "namespace"}, each "" when missing.
destination_of(app) := {
	"server": str(dest, "server"),
	"name": str(dest, "name"),
	"namespace": str(dest, "namespace"),
} if {
	dest := app.spec.destination
	is_object(dest)
} else := {"server": "", "name": "", "namespace": ""}

# app_project returns an Application's spec.project, "default" when empty.
app_project(app) := p if {
	p := app.spec.project
	non_empty_string(p)
} else := "default"
