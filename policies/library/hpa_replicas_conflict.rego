# hpa-replicas-conflict: an autoscaled workload leaves replicas to its HPA.
#
# What: a Deployment or StatefulSet that sets spec.replicas while a
# HorizontalPodAutoscaler (in the same review or the cluster) targets it.
# Why: every sync resets the replica count to the manifest's value, undoing
# what the autoscaler chose: under load, pods disappear until the HPA
# scales up again, and Argo CD shows the workload OutOfSync in between.
# Fix: remove spec.replicas from the manifest and let the HPA own it.
package tollgate.builtin.hpa_replicas_conflict

import data.tollgate.lib

violation contains v if {
	input.context.scaledByHPA == true
	input.object.kind in {"Deployment", "StatefulSet"}
	startswith(input.object.apiVersion, "apps/")
	replicas := input.object.spec.replicas
	replicas != null
	v := {
		"rule": "hpa-replicas-conflict",
		"msg": sprintf(
			"%s sets spec.replicas to %v while a HorizontalPodAutoscaler scales it, so every sync resets the replica count the autoscaler chose; remove spec.replicas and let the HPA own it",
			[lib.describe(input.object), replicas],
		),
		"path": ["spec", "replicas"],
	}
}
