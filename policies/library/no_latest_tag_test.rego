package tollgate.builtin.no_latest_tag_test

import data.tollgate.builtin.no_latest_tag
import data.tollgate.lib

digest := "sha256:2a3c2b0d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5"

deployment(containers) := {
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": {"name": "web", "namespace": "shop"},
	"spec": {"replicas": 2, "template": {"spec": {"containers": containers}}},
}

container(image) := {"name": "web", "image": image}

violations(obj) := vs if {
	vs := no_latest_tag.violation with input as {
		"object": obj,
		"context": {"enforcementPoint": "cli", "argocdNamespace": "argocd", "clusterScoped": false},
	}
}

image_path := ["spec", "template", "spec", "containers", 0, "image"]

test_pinned_images_allowed[image] if {
	some image in [
		"nginx:1.27.3",
		"docker.io/library/nginx:1.27.3-alpine",
		"registry:5000/app:v1",
		"localhost:5000/team/app:2024.06.01",
		concat("@", ["nginx", digest]),
		concat("@", ["nginx:latest", digest]),
		concat("@", ["nginx:1.27", digest]),
		concat("@", ["localhost:5000/app", digest]),
		"ghcr.io/org/app:latest-but-not-quite",
	]
	count(violations(deployment([container(image)]))) == 0
}

test_latest_tag_denied if {
	violations(deployment([container("nginx:latest")])) == {{
		"rule": "no-latest-tag",
		"msg": `container "web" uses image "nginx:latest" with the mutable tag "latest"; pin a version tag or a digest (@sha256:...)`,
		"path": image_path,
	}}
}

test_missing_tag_denied if {
	violations(deployment([container("nginx")])) == {{
		"rule": "no-latest-tag",
		"msg": `container "web" uses image "nginx" without a tag, which means the mutable tag "latest"; pin a version tag or a digest (@sha256:...)`,
		"path": image_path,
	}}
}

test_untagged_references_denied[image] if {
	some image in [
		"nginx",
		"library/nginx",
		"docker.io/library/nginx",
		"localhost:5000/app",
		"registry.example.com:8443/team/app",
		"registry:5000/app:latest",
		"nginx:",
	]
	some v in violations(deployment([container(image)]))
	v.path == image_path
	contains(v.msg, sprintf("%q", [image]))
}

test_registry_port_is_not_a_tag if {
	some v in violations(deployment([container("localhost:5000/app")]))
	contains(v.msg, "without a tag")
}

test_empty_digest_denied[image] if {
	some image in ["nginx:1.0@", "nginx@"]
	violations(deployment([container(image)])) == {{
		"rule": "no-latest-tag",
		"msg": sprintf(`container "web" uses image %q with an empty digest after "@"; pin a version tag or a digest (@sha256:...)`, [image]),
		"path": image_path,
	}}
}

test_malformed_digest_denied if {
	violations(deployment([container("nginx@sha256:abc")])) == {{
		"rule": "no-latest-tag",
		"msg": `container "web" uses image "nginx@sha256:abc" with a malformed digest "sha256:abc"; pin a version tag or a digest (@sha256:...)`,
		"path": image_path,
	}}
}

test_missing_image_denied[note] if {
	some note, c in {
		"no image field": {"name": "web"},
		"empty image": {"name": "web", "image": ""},
		"blank image": {"name": "web", "image": "  "},
		"image not a string": {"name": "web", "image": 42},
	}
	violations(deployment([c])) == {{
		"rule": "no-latest-tag",
		"msg": `container "web" has no image; set an image and pin a version tag or a digest (@sha256:...)`,
		"path": image_path,
	}}
}

test_every_container_list_checked if {
	pod := {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "debug"},
		"spec": {
			"containers": [container("nginx:1.27"), {"name": "sidecar", "image": "envoy"}],
			"initContainers": [{"name": "setup", "image": "busybox:latest"}],
			"ephemeralContainers": [{"name": "debugger", "image": "alpine"}],
		},
	}
	got := {[v.path, v.msg] | some v in violations(pod)}
	got == {
		[
			["spec", "containers", 1, "image"],
			`container "sidecar" uses image "envoy" without a tag, which means the mutable tag "latest"; pin a version tag or a digest (@sha256:...)`,
		],
		[
			["spec", "initContainers", 0, "image"],
			`init container "setup" uses image "busybox:latest" with the mutable tag "latest"; pin a version tag or a digest (@sha256:...)`,
		],
		[
			["spec", "ephemeralContainers", 0, "image"],
			`ephemeral container "debugger" uses image "alpine" without a tag, which means the mutable tag "latest"; pin a version tag or a digest (@sha256:...)`,
		],
	}
}

test_unnamed_container_named_by_index if {
	some v in violations(deployment([container("nginx:1"), {"image": "nginx"}]))
	startswith(v.msg, `container containers[1] uses image "nginx"`)
	v.path == ["spec", "template", "spec", "containers", 1, "image"]
}

pod_spec := {"containers": [container("nginx:latest")]}

test_pod_bearing_kinds[kind] if {
	some kind, c in {
		"Pod": {"obj": {"apiVersion": "v1", "kind": "Pod", "spec": pod_spec}, "path": ["spec"]},
		"PodTemplate": {"obj": {"apiVersion": "v1", "kind": "PodTemplate", "template": {"spec": pod_spec}}, "path": ["template", "spec"]},
		"ReplicationController": {"obj": {"apiVersion": "v1", "kind": "ReplicationController", "spec": {"template": {"spec": pod_spec}}}, "path": ["spec", "template", "spec"]},
		"Deployment": {"obj": {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"template": {"spec": pod_spec}}}, "path": ["spec", "template", "spec"]},
		"Deployment extensions/v1beta1": {"obj": {"apiVersion": "extensions/v1beta1", "kind": "Deployment", "spec": {"template": {"spec": pod_spec}}}, "path": ["spec", "template", "spec"]},
		"StatefulSet": {"obj": {"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {"template": {"spec": pod_spec}}}, "path": ["spec", "template", "spec"]},
		"DaemonSet": {"obj": {"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": {"template": {"spec": pod_spec}}}, "path": ["spec", "template", "spec"]},
		"ReplicaSet": {"obj": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "spec": {"template": {"spec": pod_spec}}}, "path": ["spec", "template", "spec"]},
		"Job": {"obj": {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": pod_spec}}}, "path": ["spec", "template", "spec"]},
		"CronJob": {"obj": {"apiVersion": "batch/v1", "kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": pod_spec}}}}}, "path": ["spec", "jobTemplate", "spec", "template", "spec"]},
	}
	[v] := [v | some v in violations(c.obj)]
	v.path == array.concat(c.path, ["containers", 0, "image"])
	v.rule == "no-latest-tag"
}

test_other_objects_ignored[note] if {
	some note, obj in {
		"ConfigMap": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"image": "nginx:latest"}},
		"Deployment of another group": {"apiVersion": "example.com/v1", "kind": "Deployment", "spec": {"template": {"spec": pod_spec}}},
		"CronJob with the pod spec of a Job": {"apiVersion": "batch/v1", "kind": "CronJob", "spec": {"template": {"spec": pod_spec}}},
		"Pod in apps group": {"apiVersion": "apps/v1", "kind": "Pod", "spec": pod_spec},
	}
	count(violations(obj)) == 0
}

test_malformed_objects_tolerated[note] if {
	some note, obj in {
		"no spec": {"apiVersion": "v1", "kind": "Pod"},
		"spec not an object": {"apiVersion": "v1", "kind": "Pod", "spec": "nginx:latest"},
		"containers not a list": {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": {"image": "nginx"}}},
		"containers a map of containers": {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": {"a": {"name": "a", "image": "nginx"}}}},
		"init containers a map of containers": {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"template": {"spec": {
			"containers": [container("nginx:1")],
			"initContainers": {"setup": {"image": "busybox"}},
		}}}},
		"container not an object": {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": ["nginx"]}},
		"no apiVersion": {"kind": "Pod", "spec": pod_spec},
	}
	count(violations(obj)) == 0
}

# The rule repeats lib.pod_kinds as a literal (for the rule index); every
# kind there must be checked.
pod_objects := {
	"Pod": {"apiVersion": "v1", "kind": "Pod", "spec": pod_spec},
	"PodTemplate": {"apiVersion": "v1", "kind": "PodTemplate", "template": {"spec": pod_spec}},
	"ReplicationController": {"apiVersion": "v1", "kind": "ReplicationController", "spec": {"template": {"spec": pod_spec}}},
	"Deployment": {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"template": {"spec": pod_spec}}},
	"StatefulSet": {"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {"template": {"spec": pod_spec}}},
	"DaemonSet": {"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": {"template": {"spec": pod_spec}}},
	"ReplicaSet": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "spec": {"template": {"spec": pod_spec}}},
	"Job": {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": pod_spec}}},
	"CronJob": {"apiVersion": "batch/v1", "kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": pod_spec}}}}},
}

test_pod_kinds_all_checked if {
	{kind | some kind, _ in pod_objects} == lib.pod_kinds
	every _, obj in pod_objects {
		count(violations(obj)) == 1
	}
}

# unpinned answers false, not undefined, for a pinned image, so that the
# evaluator keeps that answer too.
test_unpinned if {
	no_latest_tag.unpinned("nginx:1.27.3") == false
	no_latest_tag.unpinned(concat("@", ["nginx", digest])) == false
	no_latest_tag.unpinned("nginx:latest") == true
	no_latest_tag.unpinned("nginx") == true
	no_latest_tag.unpinned(null) == true
	no_latest_tag.unpinned(42) == true
}
