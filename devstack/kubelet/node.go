package kubelet

import (
	"context"
	"fmt"
	"maps"
	goruntime "runtime"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// leaseDurationSeconds is how long the node lifecycle controller trusts a
// renewal, as with the real kubelet.
const leaseDurationSeconds = 40

// hostIP is the node's address and the host IP of every Pod.
const hostIP = "127.0.0.1"

// registerNode creates the Node, or adds its labels to the existing one,
// and writes its status through the status subresource.
func (k *kubelet) registerNode(ctx context.Context) error {
	nodes := k.client.CoreV1().Nodes()
	name := k.opts.NodeName
	labels := map[string]string{
		corev1.LabelHostname:   name,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: goruntime.GOARCH,
	}
	node, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		node, err = k.labelNode(ctx, labels)
	} else if err != nil {
		err = fmt.Errorf("create node %s: %w", name, err)
	}
	if err != nil {
		return err
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if node == nil {
			fresh, err := nodes.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			node = fresh
		}
		node.Status = k.nodeStatus(node.Status)
		updated, err := nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{})
		node = updated
		if err != nil {
			node = nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("update node status %s: %w", name, err)
	}
	k.nodeUID = node.UID
	return nil
}

// labelNode adds labels to the existing Node, keeping the others.
func (k *kubelet) labelNode(ctx context.Context, labels map[string]string) (*corev1.Node, error) {
	nodes := k.client.CoreV1().Nodes()
	name := k.opts.NodeName
	var node *corev1.Node
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var err error
		node, err = nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		want := maps.Clone(node.Labels)
		if want == nil {
			want = map[string]string{}
		}
		maps.Copy(want, labels)
		if maps.Equal(want, node.Labels) {
			return nil
		}
		node.Labels = want
		node, err = nodes.Update(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update node %s: %w", name, err)
	}
	return node, nil
}

// nodeStatus returns old with what a healthy kubelet reports: Ready, no
// pressure, capacity, address. Transition times of unchanged conditions
// are kept.
func (k *kubelet) nodeStatus(old corev1.NodeStatus) corev1.NodeStatus {
	now := metav1.NewTime(k.opts.Clock.Now())
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("8"),
		corev1.ResourceMemory: resource.MustParse("32Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	st := *old.DeepCopy()
	st.Capacity = capacity
	st.Allocatable = capacity.DeepCopy()
	st.Phase = ""
	st.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: hostIP},
		{Type: corev1.NodeHostName, Address: k.opts.NodeName},
	}
	st.NodeInfo = corev1.NodeSystemInfo{
		OperatingSystem:         "linux",
		Architecture:            goruntime.GOARCH,
		OSImage:                 "tollgate dev (simulated: nothing runs)",
		ContainerRuntimeVersion: "tollgate-dev://simulated",
	}
	for _, c := range []corev1.NodeCondition{
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "simulated kubelet has sufficient memory available"},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "simulated kubelet has no disk pressure"},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "simulated kubelet has sufficient PID available"},
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "simulated kubelet is posting ready status: nothing really runs"},
	} {
		c.LastHeartbeatTime, c.LastTransitionTime = now, now
		st.Conditions = setNodeCondition(st.Conditions, c)
	}
	return st
}

// setNodeCondition replaces or appends c, keeping the transition time when
// the status is unchanged.
func setNodeCondition(conds []corev1.NodeCondition, c corev1.NodeCondition) []corev1.NodeCondition {
	for i := range conds {
		if conds[i].Type != c.Type {
			continue
		}
		if conds[i].Status == c.Status {
			c.LastTransitionTime = conds[i].LastTransitionTime
		}
		conds[i] = c
		return conds
	}
	return append(conds, c)
}

// keepLease renews the node's Lease now and every LeaseRenewInterval until
// ctx ends. A failed renewal is logged and tried again at the next tick.
func (k *kubelet) keepLease(ctx context.Context) {
	t := k.opts.Clock.NewTicker(k.opts.LeaseRenewInterval)
	defer t.Stop()
	for {
		if err := k.renewLease(ctx); err != nil && ctx.Err() == nil {
			k.log.Error(err, "Lease not renewed")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// renewLease sets the Lease's renewTime to now, creating the Lease (owned
// by the Node) when it is missing.
func (k *kubelet) renewLease(ctx context.Context) error {
	leases := k.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	name := k.opts.NodeName
	now := metav1.NewMicroTime(k.opts.Clock.Now())
	lease, err := leases.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: corev1.NamespaceNodeLease,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: name, UID: k.nodeUID,
			}},
		}}
		lease.Spec = k.leaseSpec(now)
		if _, err := leases.Create(ctx, lease, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create lease %s: %w", name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get lease %s: %w", name, err)
	}
	lease.Spec = k.leaseSpec(now)
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update lease %s: %w", name, err)
	}
	return nil
}

// leaseSpec is held by the node, renewed at now.
func (k *kubelet) leaseSpec(now metav1.MicroTime) coordinationv1.LeaseSpec {
	return coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(k.opts.NodeName),
		LeaseDurationSeconds: ptr.To[int32](leaseDurationSeconds),
		RenewTime:            &now,
	}
}
