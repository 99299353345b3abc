# Shared helpers for the built-in rules: object identity, API groups and the
# review context. Every function here tolerates malformed input (a number
# where a string belongs, a missing metadata block) by being undefined or by
# returning a neutral value, so a broken manifest never makes a rule error.
#
# The other lib_*.rego files extend this package: lib_glob.rego (Argo CD glob
# matching), lib_images.rego (image references), lib_pods.rego (pod specs
# and containers), lib_project.rego (AppProject permission checks).
#
# Speed. Most objects under review concern most rules not at all, so the
# rules are written for the evaluator's per-kind queries, OPA's rule index
# and few evaluation steps:
#
#   - A package whose every violation rule has a conjunct
#     `input.object.kind == "K"` or `input.object.kind in {...}` is left out
#     of the query of every other kind (policies/evaluator_kinds.go).
#   - The evaluator converts only the parts of input.object the rules of the
#     kind's query can read (policies/evaluator_reads.go). Read the object
#     through references (`input.object.spec.template.spec`); a builtin
#     given input.object whole, or a comparison of it with anything but
#     input.application, makes every review convert the whole object.
#   - A violation rule states, among its first expressions, what it needs
#     of input as comparisons OPA indexes: `input.object.kind == "Secret"`,
#     `input.object.kind in {...}`, `startswith(input.object.apiVersion,
#     "apps/")` (the API group "apps"), `input.context.clusterScoped ==
#     false`, or a bare `input.project.spec.x` that must be defined. The
#     index then skips the rule for other objects without entering it. A
#     comparison with a rule's value (`lib.x == "apps"`) is not indexed: it
#     only narrows a rule already entered.
#   - Values several rules need in one review (the pod spec, the namespace
#     a rendered object lands in) are rules without arguments, which OPA
#     computes once per review.
#   - A function that reads no input (nor any rule that does) is pure: the
#     evaluator keeps its results across reviews (policies/
#     evaluator_cache.go). Facts about an Application and its AppProject are
#     therefore computed by pure functions of input.application and
#     input.project (namespace_permitted, resource_in_list), so the objects
#     an Application renders pay for them once. Only defined results are
#     kept: a check whose common answer is "no" is a function that returns
#     false (`else := false`), not one that is undefined, and a call to it
#     that yields false fails without the cost of a `not`.
#   - Every evaluation step costs, and a rule reference, a function call or
#     a builtin call costs more than a comparison: the paths every object
#     takes avoid needless rule references, fold a rule's checks of an
#     Application or AppProject into one pure function call (the rule only
#     hands it the few values of input it needs), and leave messages
#     (sprintf) to violations, built by a function outside the rule body.
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

argocd_namespace := argocd_namespace_of(input.context)

# argocd_namespace_of is the Argo CD namespace a review context names:
# context.argocdNamespace, or "argocd" when that is not a string with
# something besides spaces. (A pure function: the evaluator keeps its
# results across reviews, which share a handful of contexts.)
argocd_namespace_of(context) := ns if {
	ns := context.argocdNamespace
	is_string(ns)
	trim_space(ns) != ""
} else := "argocd"

# object_is_argocd_kind holds when input.object is one of the Argo CD kinds
# that live in the Argo CD namespace by design: Application, ApplicationSet
# and AppProject.
object_is_argocd_kind if {
	input.object.kind in {"Application", "ApplicationSet", "AppProject"}
	startswith(input.object.apiVersion, "argoproj.io/")
}

# rendered holds when input.object is a manifest that input.application
# renders (or claims), not the Application itself. (The comparison of two
# different objects stops at the first field that differs.)
rendered if {
	is_object(input.application)
	input.object != input.application
}

# reviewed_application holds when input.object is an Application judged as
# such, with input.project as its own AppProject: not a child Application
# rendered by a parent (input.application is then the parent, and
# input.project the parent's project).
reviewed_application if {
	input.object.kind == "Application"
	startswith(input.object.apiVersion, "argoproj.io/")
	not rendered
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
	ns := input.object.metadata.namespace
	is_string(ns)
	ns != ""
} else := [app_destination.namespace, {}]

# destination_of returns an Application's spec.destination as
# {"server", "name", "namespace"}, each "" when missing or not a string.
# The first clause takes a well-formed destination in a few builtin calls.
destination_of(app) := d if {
	dest := app.spec.destination
	is_object(dest)
	d := object.union({"server": "", "name": "", "namespace": ""}, object.filter(dest, ["server", "name", "namespace"]))
	is_string(d.server)
	is_string(d.name)
	is_string(d.namespace)
} else := {
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
