package tollgate.lib_test

import data.tollgate.lib

test_pod_spec_path[note] if {
	some note, c in {
		"Pod": {"obj": {"apiVersion": "v1", "kind": "Pod"}, "want": ["spec"]},
		"PodTemplate": {"obj": {"apiVersion": "v1", "kind": "PodTemplate"}, "want": ["template", "spec"]},
		"ReplicationController": {"obj": {"apiVersion": "v1", "kind": "ReplicationController"}, "want": ["spec", "template", "spec"]},
		"Deployment": {"obj": {"apiVersion": "apps/v1", "kind": "Deployment"}, "want": ["spec", "template", "spec"]},
		"Deployment extensions": {"obj": {"apiVersion": "extensions/v1beta1", "kind": "Deployment"}, "want": ["spec", "template", "spec"]},
		"StatefulSet": {"obj": {"apiVersion": "apps/v1", "kind": "StatefulSet"}, "want": ["spec", "template", "spec"]},
		"DaemonSet": {"obj": {"apiVersion": "apps/v1", "kind": "DaemonSet"}, "want": ["spec", "template", "spec"]},
		"ReplicaSet": {"obj": {"apiVersion": "apps/v1", "kind": "ReplicaSet"}, "want": ["spec", "template", "spec"]},
		"Job": {"obj": {"apiVersion": "batch/v1", "kind": "Job"}, "want": ["spec", "template", "spec"]},
		"CronJob": {"obj": {"apiVersion": "batch/v1", "kind": "CronJob"}, "want": ["spec", "jobTemplate", "spec", "template", "spec"]},
	}
	lib.pod_spec_path == c.want with input as {"object": c.obj}
}

test_pod_spec_path_undefined[note] if {
	some note, obj in {
		"ConfigMap": {"apiVersion": "v1", "kind": "ConfigMap"},
		"foreign Deployment": {"apiVersion": "example.com/v1", "kind": "Deployment"},
		"StatefulSet in extensions": {"apiVersion": "extensions/v1beta1", "kind": "StatefulSet"},
		"no kind": {"apiVersion": "v1"},
		"no apiVersion": {"kind": "Pod"},
		"kind not a string": {"apiVersion": "v1", "kind": ["Pod"]},
	}
	not lib.pod_spec_path with input as {"object": obj}
}

test_container_label if {
	lib.container_label("containers", {"name": "web"}, 0) == `container "web"`
	lib.container_label("initContainers", {"image": "a"}, 2) == "init container initContainers[2]"
	lib.container_label("ephemeralContainers", {"name": "debug"}, 0) == `ephemeral container "debug"`
	lib.container_label("containers", {"name": ""}, 1) == "container containers[1]"
}

# pod_spec repeats the clauses of pod_spec_path; the two must agree.
pod_spec_cases := {
	"Pod": {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": []}},
	"PodTemplate": {"apiVersion": "v1", "kind": "PodTemplate", "template": {"spec": {"containers": []}}},
	"ReplicationController": {"apiVersion": "v1", "kind": "ReplicationController", "spec": {"template": {"spec": {"containers": []}}}},
	"Deployment": {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"template": {"spec": {"containers": []}}}},
	"Deployment extensions": {"apiVersion": "extensions/v1beta1", "kind": "Deployment", "spec": {"template": {"spec": {"containers": []}}}},
	"StatefulSet": {"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {"template": {"spec": {"containers": []}}}},
	"DaemonSet": {"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": {"template": {"spec": {"containers": []}}}},
	"DaemonSet extensions": {"apiVersion": "extensions/v1beta1", "kind": "DaemonSet", "spec": {"template": {"spec": {"containers": []}}}},
	"ReplicaSet": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "spec": {"template": {"spec": {"containers": []}}}},
	"Job": {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": {"containers": []}}}},
	"CronJob": {"apiVersion": "batch/v1", "kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}}},
	"Deployment without a template": {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {}},
	"Pod with a spec that is not an object": {"apiVersion": "v1", "kind": "Pod", "spec": "x"},
}

test_pod_spec_agrees_with_pod_spec_path if {
	every obj in pod_spec_cases {
		pod_spec_agrees(obj)
	}
}

pod_spec_agrees(obj) if {
	path := lib.pod_spec_path with input as {"object": obj}
	want := object.get(obj, path, null)
	want != null
	lib.pod_spec == want with input as {"object": obj}
}

pod_spec_agrees(obj) if {
	path := lib.pod_spec_path with input as {"object": obj}
	object.get(obj, path, null) == null
	not lib.pod_spec with input as {"object": obj}
}

test_pod_spec_undefined[note] if {
	some note, obj in {
		"ConfigMap": {"apiVersion": "v1", "kind": "ConfigMap", "spec": {}},
		"foreign Deployment": {"apiVersion": "example.com/v1", "kind": "Deployment", "spec": {}},
		"StatefulSet in extensions": {"apiVersion": "extensions/v1beta1", "kind": "StatefulSet", "spec": {}},
		"Pod in apps": {"apiVersion": "apps/v1", "kind": "Pod", "spec": {}},
		"CronJob in apps": {"apiVersion": "apps/v1", "kind": "CronJob", "spec": {}},
		"no apiVersion": {"kind": "Pod", "spec": {}},
		"kind not a string": {"apiVersion": "v1", "kind": ["Pod"], "spec": {}},
	}
	not lib.pod_spec with input as {"object": obj}
}

test_pod_kinds_have_a_pod_spec if {
	every kind in lib.pod_kinds {
		some obj in pod_spec_cases
		obj.kind == kind
		lib.pod_spec with input as {"object": obj}
	}
}
