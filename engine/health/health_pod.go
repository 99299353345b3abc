package health

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// AnnotationIgnoreRestartPolicy (present, whatever its value) makes a
// running Pod with restartPolicy OnFailure or Never that is not a hook be
// judged like a long-running Pod (Healthy when ready) instead of
// Progressing. Argo CD's annotation.
const AnnotationIgnoreRestartPolicy = "argocd.argoproj.io/ignore-restart-policy"

func podHealth(obj *unstructured.Unstructured) (Result, error) {
	var pod corev1.Pod
	if err := fromUnstructured(obj, &pod); err != nil {
		return Result{}, err
	}
	// Waiting reasons such as CrashLoopBackOff, ImagePullBackOff,
	// ErrImagePull or CreateContainerConfigError are Degraded, but only for
	// restartPolicy Always: a hook Pod (OnFailure, Never) stuck on an image
	// must not fail its sync phase before the image appears.
	if pod.Spec.RestartPolicy == corev1.RestartPolicyAlways {
		var msgs []string
		for _, cs := range pod.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && isErrorReason(w.Reason) {
				msgs = append(msgs, waitingMessage(cs.Name, w))
			}
		}
		if len(msgs) > 0 {
			return Result{Status: Degraded, Message: strings.Join(msgs, ", ")}, nil
		}
	}
	switch pod.Status.Phase {
	case corev1.PodPending:
		return Result{Status: Progressing, Message: pod.Status.Message}, nil
	case corev1.PodSucceeded:
		return Result{Status: Healthy, Message: pod.Status.Message}, nil
	case corev1.PodFailed:
		if pod.Status.Message != "" {
			return Result{Status: Degraded, Message: pod.Status.Message}, nil
		}
		for _, cs := range append(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses...) {
			if msg := failMessage(cs); msg != "" {
				return Result{Status: Degraded, Message: msg}, nil
			}
		}
		return Result{Status: Degraded}, nil
	case corev1.PodRunning:
		_, ignorePolicy := pod.Annotations[AnnotationIgnoreRestartPolicy]
		if pod.Spec.RestartPolicy == corev1.RestartPolicyAlways || (ignorePolicy && !isHookPod(&pod)) {
			return runningPodHealth(&pod), nil
		}
		// OnFailure and Never Pods are finite, usually hooks: running is
		// not done.
		if pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure || pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
			return Result{Status: Progressing, Message: pod.Status.Message}, nil
		}
	}
	return Result{Status: Unknown, Message: pod.Status.Message}, nil
}

// runningPodHealth judges a running long-lived Pod: ready is Healthy, a
// container that has terminated before is Degraded, else Progressing.
func runningPodHealth(pod *corev1.Pod) Result {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return Result{Status: Healthy, Message: pod.Status.Message}
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.LastTerminationState.Terminated != nil {
			return Result{Status: Degraded, Message: pod.Status.Message}
		}
	}
	return Result{Status: Progressing, Message: pod.Status.Message}
}

func isErrorReason(reason string) bool {
	return strings.HasPrefix(reason, "Err") || strings.HasSuffix(reason, "Error") || strings.HasSuffix(reason, "BackOff")
}

// waitingMessage is the kubelet's message, or the reason when there is
// none (Argo CD shows an empty message then).
func waitingMessage(container string, w *corev1.ContainerStateWaiting) string {
	if w.Message != "" {
		return w.Message
	}
	return fmt.Sprintf("container %q is waiting: %s", container, w.Reason)
}

func failMessage(cs corev1.ContainerStatus) string {
	t := cs.State.Terminated
	switch {
	case t == nil:
		return ""
	case t.Message != "":
		return t.Message
	case t.Reason == "OOMKilled":
		return t.Reason
	case t.ExitCode != 0:
		return fmt.Sprintf("container %q failed with exit code %d", cs.Name, t.ExitCode)
	}
	return ""
}

// isHookPod reports whether a Pod is an Argo CD hook (an
// argocd.argoproj.io/hook annotation other than Skip) or a Helm hook.
func isHookPod(pod *corev1.Pod) bool {
	if h, ok := pod.Annotations["argocd.argoproj.io/hook"]; ok && h != "Skip" {
		return true
	}
	_, helm := pod.Annotations["helm.sh/hook"]
	return helm
}
