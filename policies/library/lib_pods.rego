# Pod specs inside pod-bearing objects, and their containers.
#
# These run for every object under review, so they are written for OPA's
# rule index: each pod_spec_path clause compares input.object.kind and
# input.object.apiVersion to constants, and only the clause of the object's
# kind and API group is evaluated (a constant object mapping kinds to paths
# would be rebuilt on every review).
package tollgate.lib

# pod_kinds are the kinds pod_spec_path knows. A rule that checks pod specs
# repeats this set as a literal among its first expressions, so that OPA's
# rule index skips it for every other kind (the index reads literals only).
pod_kinds := {
	"Pod", "PodTemplate", "ReplicationController",
	"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet",
	"Job", "CronJob",
}

# pod_spec_path is the path of input.object's pod spec; undefined for
# objects that carry none. A "group/" prefix of apiVersion is the API group;
# the core group's only version is "v1".
pod_spec_path := ["spec"] if {
	input.object.kind == "Pod"
	input.object.apiVersion == "v1"
}

pod_spec_path := ["template", "spec"] if {
	input.object.kind == "PodTemplate"
	input.object.apiVersion == "v1"
}

pod_spec_path := ["spec", "template", "spec"] if {
	input.object.kind == "ReplicationController"
	input.object.apiVersion == "v1"
}

pod_spec_path := ["spec", "template", "spec"] if {
	input.object.kind in {"Deployment", "DaemonSet", "ReplicaSet"}
	strings.any_prefix_match(input.object.apiVersion, {"apps/", "extensions/"})
}

pod_spec_path := ["spec", "template", "spec"] if {
	input.object.kind == "StatefulSet"
	startswith(input.object.apiVersion, "apps/")
}

pod_spec_path := ["spec", "template", "spec"] if {
	input.object.kind == "Job"
	startswith(input.object.apiVersion, "batch/")
}

pod_spec_path := ["spec", "jobTemplate", "spec", "template", "spec"] if {
	input.object.kind == "CronJob"
	startswith(input.object.apiVersion, "batch/")
}

# pod_spec is input.object's pod spec (whatever value sits at
# pod_spec_path); undefined when the path is missing and for objects that
# carry none. Its clauses repeat those of pod_spec_path (lib_pods_test.rego
# checks that they agree), so that a review computes one rule, not two, and
# the common kinds are told apart by the rule index alone. They are plain
# references: object.get(input.object, path, null) costs a review about
# 5 µs more (BenchmarkEvaluateDeployment).
pod_spec := input.object.spec if {
	input.object.kind == "Pod"
	input.object.apiVersion == "v1"
}

pod_spec := input.object.template.spec if {
	input.object.kind == "PodTemplate"
	input.object.apiVersion == "v1"
}

pod_spec := input.object.spec.template.spec if {
	input.object.kind == "ReplicationController"
	input.object.apiVersion == "v1"
}

pod_spec := input.object.spec.template.spec if {
	input.object.kind == "Deployment"
	strings.any_prefix_match(input.object.apiVersion, {"apps/", "extensions/"})
}

pod_spec := input.object.spec.template.spec if {
	input.object.kind == "DaemonSet"
	strings.any_prefix_match(input.object.apiVersion, {"apps/", "extensions/"})
}

pod_spec := input.object.spec.template.spec if {
	input.object.kind == "ReplicaSet"
	strings.any_prefix_match(input.object.apiVersion, {"apps/", "extensions/"})
}

pod_spec := input.object.spec.template.spec if {
	input.object.kind == "StatefulSet"
	startswith(input.object.apiVersion, "apps/")
}

pod_spec := input.object.spec.template.spec if {
	input.object.kind == "Job"
	startswith(input.object.apiVersion, "batch/")
}

pod_spec := input.object.spec.jobTemplate.spec.template.spec if {
	input.object.kind == "CronJob"
	startswith(input.object.apiVersion, "batch/")
}

# container_label names a container for a message: `container "web"`,
# `init container "setup"`, or `container containers[1]` when it has no name.
container_label(field, container, i) := sprintf("%s %q", [container_role(field), name]) if {
	name := container.name
	non_empty_string(name)
} else := sprintf("%s %s[%d]", [container_role(field), field, i])

container_role(field) := "init container" if {
	field == "initContainers"
} else := "ephemeral container" if {
	field == "ephemeralContainers"
} else := "container"
