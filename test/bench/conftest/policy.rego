# Equivalent rules for conftest in `make bench`: deny latest or missing image
# tags in Pod, workload and CronJob specs, and deny v1 Secrets. Written the
# way a conftest user would, to compare throughput on the same corpus.
package main

workload_kinds := {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job"}

pod_spec := input.spec if input.kind == "Pod"

pod_spec := input.spec.template.spec if workload_kinds[input.kind]

pod_spec := input.spec.jobTemplate.spec.template.spec if input.kind == "CronJob"

containers contains c if {
	some field in ["containers", "initContainers", "ephemeralContainers"]
	some c in pod_spec[field]
}

untagged(image) if {
	not contains(image, "@")
	parts := split(image, "/")
	not contains(parts[count(parts) - 1], ":")
}

latest(image) if {
	not contains(image, "@")
	endswith(image, ":latest")
}

deny contains msg if {
	some c in containers
	untagged(c.image)
	msg := sprintf("%s/%s: container %q image %q has no tag", [input.kind, input.metadata.name, c.name, c.image])
}

deny contains msg if {
	some c in containers
	latest(c.image)
	msg := sprintf("%s/%s: container %q image %q uses latest", [input.kind, input.metadata.name, c.name, c.image])
}

deny contains msg if {
	input.apiVersion == "v1"
	input.kind == "Secret"
	msg := sprintf("Secret/%s: plaintext Secret in Git", [input.metadata.name])
}
