package kubelet

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
)

// podCIDR is where pod IPs are made up from.
var podCIDR = netip.MustParsePrefix("10.244.0.0/16")

// podIP hands out the next address of podCIDR (wrapping after 65534 pods),
// or the host's for a host-network Pod.
func (k *kubelet) podIP(pod *corev1.Pod) string {
	if pod.Spec.HostNetwork {
		return hostIP
	}
	off := (k.lastIP.Add(1)-1)%65534 + 1
	base := podCIDR.Addr().As4()
	return netip.AddrFrom4([4]byte{base[0], base[1], byte(off >> 8), byte(off)}).String()
}

// seedIPs continues the numbering after the highest pod IP already
// reported on the node, so that a restarted Run does not hand out an
// address twice.
func (k *kubelet) seedIPs() {
	pods, err := k.pods.List(labels.Everything())
	if err != nil {
		return
	}
	var highest uint32
	for _, p := range pods {
		a, err := netip.ParseAddr(p.Status.PodIP)
		if p.Spec.NodeName != k.opts.NodeName || err != nil || !a.Is4() || !podCIDR.Contains(a) {
			continue
		}
		b := a.As4()
		highest = max(highest, uint32(b[2])<<8|uint32(b[3]))
	}
	k.lastIP.Store(highest)
}

// runningStatus returns pod's status as a kubelet reports it once every
// container started: phase Running, IPs, conditions True, init containers
// exited 0 (sidecars running). What is already so is kept as it is, times
// included, so that the result equals the current status when there is
// nothing to write. podIP is called only when the Pod has no IP yet.
func runningStatus(pod *corev1.Pod, now metav1.Time, podIP func(*corev1.Pod) string) corev1.PodStatus {
	st := *pod.Status.DeepCopy()
	st.Phase = corev1.PodRunning
	st.Reason, st.Message = "", ""
	st.HostIP = hostIP
	st.HostIPs = []corev1.HostIP{{IP: hostIP}}
	if st.PodIP == "" {
		st.PodIP = podIP(pod)
	}
	st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	if st.StartTime == nil {
		st.StartTime = &now
	}

	st.InitContainerStatuses = nil
	for _, c := range pod.Spec.InitContainers {
		old := containerStatus(pod.Status.InitContainerStatuses, c.Name)
		if isSidecar(c) {
			st.InitContainerStatuses = append(st.InitContainerStatuses, runningContainer(pod, c, old, now))
		} else {
			st.InitContainerStatuses = append(st.InitContainerStatuses, initializedContainer(pod, c, old, now))
		}
	}
	st.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		old := containerStatus(pod.Status.ContainerStatuses, c.Name)
		st.ContainerStatuses = append(st.ContainerStatuses, runningContainer(pod, c, old, now))
	}

	ready := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}
	if msg := readinessGatesNotReady(pod); msg != "" {
		ready = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ReadinessGatesNotReady", Message: msg}
	}
	for _, c := range []corev1.PodCondition{
		{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
		ready,
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
	} {
		st.Conditions = setPodCondition(st.Conditions, c, now)
	}
	return st
}

// succeededStatus returns pod's status once every container exited 0.
func succeededStatus(pod *corev1.Pod, now metav1.Time) corev1.PodStatus {
	st := *pod.Status.DeepCopy()
	st.Phase = corev1.PodSucceeded
	for _, c := range pod.Spec.InitContainers {
		if old := containerStatus(st.InitContainerStatuses, c.Name); old != nil && isSidecar(c) {
			*old = exitedContainer(pod, c, old, now)
		}
	}
	st.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		old := containerStatus(pod.Status.ContainerStatuses, c.Name)
		st.ContainerStatuses = append(st.ContainerStatuses, exitedContainer(pod, c, old, now))
	}
	for _, t := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		st.Conditions = setPodCondition(st.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: "PodCompleted"}, now)
	}
	return st
}

// runningContainer is c started (or still running, when old says so with
// the same image).
func runningContainer(pod *corev1.Pod, c corev1.Container, old *corev1.ContainerStatus, now metav1.Time) corev1.ContainerStatus {
	if old != nil && old.State.Running != nil && old.Image == c.Image {
		st := *old.DeepCopy()
		st.Ready, st.Started = true, ptr.To(true)
		return st
	}
	st := newContainerStatus(pod, c)
	if old != nil {
		// The image changed: a kubelet restarts the container.
		st.RestartCount = old.RestartCount + 1
	}
	st.Ready, st.Started = true, ptr.To(true)
	st.State.Running = &corev1.ContainerStateRunning{StartedAt: now}
	return st
}

// initializedContainer is the init container c having exited 0.
func initializedContainer(pod *corev1.Pod, c corev1.Container, old *corev1.ContainerStatus, now metav1.Time) corev1.ContainerStatus {
	if old != nil && old.State.Terminated != nil && old.State.Terminated.ExitCode == 0 && old.Image == c.Image {
		return *old.DeepCopy()
	}
	st := newContainerStatus(pod, c)
	st.Ready, st.Started = true, ptr.To(false)
	st.State.Terminated = &corev1.ContainerStateTerminated{
		ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now, ContainerID: st.ContainerID,
	}
	return st
}

// exitedContainer is c, which ran since old says, having exited 0 now.
func exitedContainer(pod *corev1.Pod, c corev1.Container, old *corev1.ContainerStatus, now metav1.Time) corev1.ContainerStatus {
	st := newContainerStatus(pod, c)
	started := now
	if old != nil {
		st.RestartCount = old.RestartCount
		if old.State.Running != nil {
			started = old.State.Running.StartedAt
		}
	}
	st.Ready, st.Started = false, ptr.To(false)
	st.State.Terminated = &corev1.ContainerStateTerminated{
		ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: now, ContainerID: st.ContainerID,
	}
	return st
}

// newContainerStatus names c and its made-up image and container IDs.
func newContainerStatus(pod *corev1.Pod, c corev1.Container) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name:        c.Name,
		Image:       c.Image,
		ImageID:     "tollgate-dev://" + c.Image,
		ContainerID: fmt.Sprintf("tollgate-dev://%s-%s", pod.UID, c.Name),
	}
}

// containerStatus returns the status named name in sts, or nil.
func containerStatus(sts []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range sts {
		if sts[i].Name == name {
			return &sts[i]
		}
	}
	return nil
}

// isSidecar reports whether the init container c keeps running beside the
// containers (restartPolicy Always).
func isSidecar(c corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// readinessGatesNotReady says which of pod's readiness gates hold the Pod
// back, as a kubelet does; empty when none.
func readinessGatesNotReady(pod *corev1.Pod) string {
	var msgs []string
	for _, g := range pod.Spec.ReadinessGates {
		c := podCondition(pod.Status.Conditions, g.ConditionType)
		switch {
		case c == nil:
			msgs = append(msgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", g.ConditionType))
		case c.Status != corev1.ConditionTrue:
			msgs = append(msgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", g.ConditionType, c.Status))
		}
	}
	return strings.Join(msgs, ", ")
}

// podCondition returns the condition of type t in conds, or nil.
func podCondition(conds []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// setPodCondition replaces or appends c. An unchanged status keeps its
// transition time; a changed one transitions now.
func setPodCondition(conds []corev1.PodCondition, c corev1.PodCondition, now metav1.Time) []corev1.PodCondition {
	c.LastTransitionTime = now
	if old := podCondition(conds, c.Type); old != nil {
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
			c.LastProbeTime = old.LastProbeTime
			c.ObservedGeneration = old.ObservedGeneration
		}
		*old = c
		return conds
	}
	return append(conds, c)
}
