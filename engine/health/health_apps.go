package health

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The workload checks follow kubectl rollout status, as Argo CD does. Older
// API versions (apps/v1beta1, apps/v1beta2, extensions/v1beta1) have the
// same fields and are read into the apps/v1 types.

func deploymentHealth(obj *unstructured.Unstructured) (Result, error) {
	var d appsv1.Deployment
	if err := fromUnstructured(obj, &d); err != nil {
		return Result{}, err
	}
	if d.Spec.Paused {
		return Result{Status: Suspended, Message: "Deployment is paused"}, nil
	}
	if d.Generation > d.Status.ObservedGeneration {
		return progressing("Waiting for rollout to finish: observed deployment generation less than desired generation"), nil
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return Result{Status: Degraded, Message: fmt.Sprintf("Deployment %q exceeded its progress deadline", d.Name)}, nil
		}
	}
	st := d.Status
	switch {
	case d.Spec.Replicas != nil && st.UpdatedReplicas < *d.Spec.Replicas:
		return progressing(fmt.Sprintf("Waiting for rollout to finish: %d out of %d new replicas have been updated...", st.UpdatedReplicas, *d.Spec.Replicas)), nil
	case st.Replicas > st.UpdatedReplicas:
		return progressing(fmt.Sprintf("Waiting for rollout to finish: %d old replicas are pending termination...", st.Replicas-st.UpdatedReplicas)), nil
	case st.AvailableReplicas < st.UpdatedReplicas:
		return progressing(fmt.Sprintf("Waiting for rollout to finish: %d of %d updated replicas are available...", st.AvailableReplicas, st.UpdatedReplicas)), nil
	}
	return Result{Status: Healthy}, nil
}

func statefulSetHealth(obj *unstructured.Unstructured) (Result, error) {
	var s appsv1.StatefulSet
	if err := fromUnstructured(obj, &s); err != nil {
		return Result{}, err
	}
	st := s.Status
	if st.ObservedGeneration == 0 || s.Generation > st.ObservedGeneration {
		return progressing("Waiting for statefulset spec update to be observed..."), nil
	}
	if s.Spec.Replicas != nil && st.ReadyReplicas < *s.Spec.Replicas {
		return progressing(fmt.Sprintf("Waiting for %d pods to be ready...", *s.Spec.Replicas-st.ReadyReplicas)), nil
	}
	strategy := s.Spec.UpdateStrategy
	if strategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && strategy.RollingUpdate != nil {
		if s.Spec.Replicas != nil && strategy.RollingUpdate.Partition != nil {
			want := *s.Spec.Replicas - *strategy.RollingUpdate.Partition
			if st.UpdatedReplicas < want {
				return progressing(fmt.Sprintf("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...", st.UpdatedReplicas, want)), nil
			}
		}
		return Result{Status: Healthy, Message: fmt.Sprintf("partitioned roll out complete: %d new pods have been updated...", st.UpdatedReplicas)}, nil
	}
	if strategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return Result{Status: Healthy, Message: fmt.Sprintf("statefulset has %d ready pods", st.ReadyReplicas)}, nil
	}
	if st.UpdateRevision != st.CurrentRevision {
		return progressing(fmt.Sprintf("waiting for statefulset rolling update to complete %d pods at revision %s...", st.UpdatedReplicas, st.UpdateRevision)), nil
	}
	return Result{Status: Healthy, Message: fmt.Sprintf("statefulset rolling update complete %d pods at revision %s...", st.CurrentReplicas, st.CurrentRevision)}, nil
}

func daemonSetHealth(obj *unstructured.Unstructured) (Result, error) {
	var d appsv1.DaemonSet
	if err := fromUnstructured(obj, &d); err != nil {
		return Result{}, err
	}
	st := d.Status
	if d.Generation > st.ObservedGeneration {
		return progressing("Waiting for rollout to finish: observed daemon set generation less than desired generation"), nil
	}
	if d.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType {
		return Result{Status: Healthy, Message: fmt.Sprintf("daemon set %d out of %d new pods have been updated", st.UpdatedNumberScheduled, st.DesiredNumberScheduled)}, nil
	}
	switch {
	case st.UpdatedNumberScheduled < st.DesiredNumberScheduled:
		return progressing(fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...", d.Name, st.UpdatedNumberScheduled, st.DesiredNumberScheduled)), nil
	case st.NumberAvailable < st.DesiredNumberScheduled:
		return progressing(fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...", d.Name, st.NumberAvailable, st.DesiredNumberScheduled)), nil
	}
	return Result{Status: Healthy}, nil
}

func replicaSetHealth(obj *unstructured.Unstructured) (Result, error) {
	var r appsv1.ReplicaSet
	if err := fromUnstructured(obj, &r); err != nil {
		return Result{}, err
	}
	if r.Generation > r.Status.ObservedGeneration {
		return progressing("Waiting for rollout to finish: observed replica set generation less than desired generation"), nil
	}
	for _, c := range r.Status.Conditions {
		if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
			return Result{Status: Degraded, Message: c.Message}, nil
		}
	}
	if r.Spec.Replicas != nil && r.Status.AvailableReplicas < *r.Spec.Replicas {
		return progressing(fmt.Sprintf("Waiting for rollout to finish: %d out of %d new replicas are available...", r.Status.AvailableReplicas, *r.Spec.Replicas)), nil
	}
	return Result{Status: Healthy}, nil
}

func progressing(msg string) Result { return Result{Status: Progressing, Message: msg} }
