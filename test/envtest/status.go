package envtest

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MarkAvailable writes on d, through c, the status the deployment
// controller would write once d's pods ran: rolled out and available. The
// test control plane runs neither that controller nor a kubelet. A
// Deployment that already has that status for its generation, or is being
// deleted, is left alone. Errors are ignored: the caller marks again on its
// next pass.
func MarkAvailable(ctx context.Context, c client.Client, d *appsv1.Deployment) {
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	st := d.Status
	if d.DeletionTimestamp != nil || (st.ObservedGeneration == d.Generation && st.AvailableReplicas == replicas && st.UpdatedReplicas == replicas && st.Replicas == replicas) {
		return
	}
	now := metav1.Now()
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Replicas:           replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", LastUpdateTime: now, LastTransitionTime: now},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", LastUpdateTime: now, LastTransitionTime: now},
		},
	}
	_ = c.Status().Update(ctx, d)
}
