# Pod specs inside pod-bearing objects, and their containers.
#
# These run for every object under review, so they are written for OPA's
# rule index: each pod_spec_path clause starts with a comparison of
# input.object.kind to a constant, and only the clause of the object's kind
# is evaluated (a constant object mapping kinds to paths would be rebuilt on
# every review).
package tollgate.lib

# pod_spec_path is the path of input.object's pod spec; undefined for
# objects that carry none.
pod_spec_path := ["spec"] if {
	input.object.kind == "Pod"
	object_group == ""
}

pod_spec_path := ["template", "spec"] if {
	input.object.kind == "PodTemplate"
	object_group == ""
}

pod_spec_path := ["spec", "template", "spec"] if {
	input.object.kind == "ReplicationController"
	object_group == ""
}

pod_spec_path := ["spec", "template", "spec"] if {
	input.object.kind == "Deployment"
	object_group in {"apps", "extensions"}
}

pod_spec_path := ["spec", "template", "spec"] if {
	input.object.kind == "StatefulSet"
	object_group == "apps"
}

pod_spec_path := ["spec", "template", "spec"] if {
	input.object.kind == "DaemonSet"
	object_group in {"apps", "extensions"}
}

pod_spec_path := ["spec", "template", "spec"] if {
	input.object.kind == "ReplicaSet"
	object_group in {"apps", "extensions"}
}

pod_spec_path := ["spec", "template", "spec"] if {
	input.object.kind == "Job"
	object_group == "batch"
}

pod_spec_path := ["spec", "jobTemplate", "spec", "template", "spec"] if {
	input.object.kind == "CronJob"
	object_group == "batch"
}

# container_lists are the fields of a pod spec that hold containers.
container_lists := ["containers", "initContainers", "ephemeralContainers"]

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
