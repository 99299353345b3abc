# no-latest-tag: container images must be pinned.
#
# What: a container, init container or ephemeral container of a Pod,
# Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job,
# CronJob or PodTemplate whose image has the tag "latest", has no tag (which
# means "latest"), has a malformed or empty digest, or is missing. A
# container list that is not a list (a map of containers, say) is malformed
# for the API server too and is skipped.
# Why: a mutable tag makes the running version depend on when each node
# pulled it: replicas drift apart, a rollback does not roll back, and Git no
# longer says what runs.
# Fix: pin a version tag (nginx:1.27.3) or, better, a digest
# (nginx@sha256:...; nginx:1.27.3@sha256:... also passes).
package tollgate.builtin.no_latest_tag

import data.tollgate.lib

_fix := "pin a version tag or a digest (@sha256:...)"

violation contains v if {
	# lib.pod_kinds, as a literal for the rule index.
	input.object.kind in {
		"Pod", "PodTemplate", "ReplicationController",
		"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet",
		"Job", "CronJob",
	}
	spec := lib.pod_spec
	some field in ["containers", "initContainers", "ephemeralContainers"]
	some i, container in spec[field]
	is_object(container)

	# A pinned image, the common case, ends the check of a container here;
	# only then does it matter that spec[field] is a list, not a map.
	unpinned(object.get(container, "image", null))
	is_array(spec[field])
	v := container_violation(field, i, container)
}

# container_violation is the violation for container, spec[field][i] in the
# pod spec. (Built apart from the rule, whose evaluation then needs fewer
# variables.)
container_violation(field, i, container) := {
	"rule": "no-latest-tag",
	"msg": sprintf("%s %s; %s", [lib.container_label(field, container, i), problem, fix]),
	"path": array.concat(lib.pod_spec_path, [field, i, "image"]),
} if {
	[problem, fix] := image_problem(object.get(container, "image", null))
}

# unpinned is true when image (a container's image field, null when it has
# none) is not pinned, else false: every answer is a value, which the
# evaluator keeps across reviews (a pure function), and a call that yields
# false fails without the cost of a negation.
unpinned(image) if {
	not lib.image_pinned(image)
} else := false

# image_problem says what is wrong with an image reference that is not
# pinned, and how to fix it.
image_problem(image) := ["has no image", concat(" ", ["set an image and", _fix])] if {
	not lib.non_empty_string(image)
} else := [sprintf("uses image %q %s", [image, reference_problem(image, lib.parse_image(image))]), _fix]

reference_problem(image, ref) := `with an empty digest after "@"` if {
	contains(image, "@")
	ref.digest == ""
} else := sprintf("with a malformed digest %q", [ref.digest]) if {
	contains(image, "@")
} else := "without a tag, which means the mutable tag \"latest\"" if {
	ref.tag == ""
} else := "with the mutable tag \"latest\""
