package tollgate.builtin.hpa_replicas_conflict_test

import data.tollgate.builtin.hpa_replicas_conflict

workload(kind, spec) := {
	"apiVersion": "apps/v1",
	"kind": kind,
	"metadata": {"name": "web", "namespace": "shop"},
	"spec": spec,
}

violations(obj, scaled) := vs if {
	vs := hpa_replicas_conflict.violation with input as {
		"object": obj,
		"context": {"enforcementPoint": "cli", "argocdNamespace": "argocd", "clusterScoped": false, "scaledByHPA": scaled},
	}
}

test_replicas_with_hpa_denied if {
	violations(workload("Deployment", {"replicas": 3}), true) == {{
		"rule": "hpa-replicas-conflict",
		"msg": `Deployment "web" sets spec.replicas to 3 while a HorizontalPodAutoscaler scales it, so every sync resets the replica count the autoscaler chose; remove spec.replicas and let the HPA own it`,
		"path": ["spec", "replicas"],
	}}
}

test_statefulset_denied if {
	[v] := [v | some v in violations(workload("StatefulSet", {"replicas": 0}), true)]
	startswith(v.msg, `StatefulSet "web" sets spec.replicas to 0`)
}

test_allowed[note] if {
	some note, c in {
		"no HPA": {"obj": workload("Deployment", {"replicas": 3}), "scaled": false},
		"HPA without replicas": {"obj": workload("Deployment", {}), "scaled": true},
		"HPA with null replicas": {"obj": workload("Deployment", {"replicas": null}), "scaled": true},
		"DaemonSet": {"obj": workload("DaemonSet", {"replicas": 3}), "scaled": true},
		"other group": {"obj": object.union(workload("Deployment", {"replicas": 3}), {"apiVersion": "example.com/v1"}), "scaled": true},
	}
	count(violations(c.obj, c.scaled)) == 0
}

test_scaled_by_hpa_absent_means_false if {
	vs := hpa_replicas_conflict.violation with input as {
		"object": workload("Deployment", {"replicas": 3}),
		"context": {"enforcementPoint": "cli", "argocdNamespace": "argocd", "clusterScoped": false},
	}
	count(vs) == 0
}
