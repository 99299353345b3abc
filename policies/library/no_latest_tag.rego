# no-latest-tag: container images must be pinned.
#
# What: a container, init container or ephemeral container of a Pod,
# Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job,
# CronJob or PodTemplate whose image has the tag "latest", has no tag (which
# means "latest"), has a malformed digest, or is missing.
# Why: a mutable tag makes the running version depend on when each node
# pulled it: replicas drift apart, a rollback does not roll back, and Git no
# longer says what runs.
# Fix: pin a version tag (nginx:1.27.3) or, better, a digest
# (nginx@sha256:...; nginx:1.27.3@sha256:... also passes).
package tollgate.builtin.no_latest_tag

import data.tollgate.lib

_fix := "pin a version tag or a digest (@sha256:...)"

violation contains v if {
	prefix := lib.pod_spec_path
	spec := object.get(input.object, prefix, null)
	some field in lib.container_lists
	some i, container in spec[field]
	is_object(container)
	image := object.get(container, "image", null)
	not lib.image_pinned(image)
	[problem, fix] := image_problem(image)
	v := {
		"rule": "no-latest-tag",
		"msg": sprintf("%s %s; %s", [lib.container_label(field, container, i), problem, fix]),
		"path": array.concat(prefix, [field, i, "image"]),
	}
}

# image_problem says what is wrong with an image reference that is not
# pinned, and how to fix it.
image_problem(image) := ["has no image", concat(" ", ["set an image and", _fix])] if {
	not lib.non_empty_string(image)
} else := [sprintf("uses image %q %s", [image, reference_problem(lib.parse_image(image))]), _fix]

reference_problem(ref) := sprintf("with a malformed digest %q", [ref.digest]) if {
	ref.digest != ""
} else := "without a tag, which means the mutable tag \"latest\"" if {
	ref.tag == ""
} else := "with the mutable tag \"latest\""
