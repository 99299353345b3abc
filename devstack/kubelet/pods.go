package kubelet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// sync does the next step for one Pod: bind, start, complete or confirm
// deletion.
func (k *kubelet) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // never queued by enqueue
	}
	pod, err := k.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		k.forget(key, "")
		return nil
	}
	if err != nil {
		return fmt.Errorf("get pod %s: %w", key, err)
	}
	switch {
	case pod.Spec.NodeName == "":
		if pod.DeletionTimestamp != nil || len(pod.Spec.SchedulingGates) > 0 {
			return nil
		}
		return ignoreNotFound(k.bind(ctx, pod))
	case pod.Spec.NodeName != k.opts.NodeName:
		return nil
	case pod.DeletionTimestamp != nil:
		k.forget(key, pod.UID)
		return ignoreNotFound(k.delete(ctx, pod))
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		k.forget(key, pod.UID)
		return nil
	}
	pod, err = k.run(ctx, key, pod)
	if err != nil {
		return ignoreNotFound(err)
	}
	if !runsToCompletion(pod) {
		return nil
	}
	if wait := k.jobEnd(key, pod).Sub(k.opts.Clock.Now()); wait > 0 {
		k.queue.AddAfter(key, wait)
		return nil
	}
	if err := k.complete(ctx, pod); err != nil {
		return ignoreNotFound(err)
	}
	k.forget(key, pod.UID)
	return nil
}

// jobEnd is when pod, which runs to completion, is to be reported
// Succeeded: JobRunTime after it was reported Running.
func (k *kubelet) jobEnd(key string, pod *corev1.Pod) time.Time {
	k.mu.Lock()
	rec, ok := k.started[key]
	k.mu.Unlock()
	switch {
	case ok && rec.uid == pod.UID:
		return rec.at.Add(k.opts.JobRunTime)
	case pod.Status.StartTime != nil:
		// Started by an earlier process.
		return pod.Status.StartTime.Add(k.opts.JobRunTime)
	default:
		return k.opts.Clock.Now()
	}
}

// remember records that this process reported the Pod at key Running at at.
func (k *kubelet) remember(key string, uid types.UID, at time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.started[key] = startRecord{uid: uid, at: at}
}

// forget drops the start record for key; for any Pod when uid is empty.
func (k *kubelet) forget(key string, uid types.UID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if rec, ok := k.started[key]; ok && (uid == "" || rec.uid == uid) {
		delete(k.started, key)
	}
}

// runsToCompletion reports whether pod is a Job-like Pod, one that is not
// restarted when its containers exit.
func runsToCompletion(pod *corev1.Pod) bool {
	return pod.Spec.RestartPolicy == corev1.RestartPolicyNever || pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure
}

// ignoreNotFound drops the error of a call on a Pod deleted meanwhile:
// there is nothing left to do.
func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// bind assigns an unscheduled Pod to the node through the pods/binding
// subresource, as the scheduler does. The UID guards against a Pod
// re-created under the same name meanwhile.
func (k *kubelet) bind(ctx context.Context, pod *corev1.Pod) error {
	b := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: k.opts.NodeName},
	}
	if err := k.client.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bind pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	k.log.V(1).Info("Pod bound", "pod", ref(pod))
	return nil
}

// run reports pod Running, unless its status already says what running
// would, and returns the Pod as it now is.
func (k *kubelet) run(ctx context.Context, key string, pod *corev1.Pod) (*corev1.Pod, error) {
	now := k.opts.Clock.Now()
	want := runningStatus(pod, metav1.NewTime(now), k.podIP)
	if equality.Semantic.DeepEqual(want, pod.Status) {
		return pod, nil
	}
	wasRunning := pod.Status.Phase == corev1.PodRunning
	pod = pod.DeepCopy()
	pod.Status = want
	updated, err := k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update pod status %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if wasRunning {
		k.log.V(1).Info("Pod status refreshed", "pod", ref(pod))
		return updated, nil
	}
	k.remember(key, pod.UID, now)
	k.log.V(1).Info("Pod running", "pod", ref(pod), "podIP", want.PodIP)
	return updated, nil
}

// complete reports pod Succeeded, every container having exited 0.
func (k *kubelet) complete(ctx context.Context, pod *corev1.Pod) error {
	pod = pod.DeepCopy()
	pod.Status = succeededStatus(pod, metav1.NewTime(k.opts.Clock.Now()))
	if _, err := k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update pod status %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	k.log.V(1).Info("Pod succeeded", "pod", ref(pod))
	return nil
}

// delete confirms the graceful deletion of pod, as a kubelet does once its
// containers have stopped: without it the Pod stays Terminating for ever.
// The UID precondition spares a Pod re-created under the same name.
func (k *kubelet) delete(ctx context.Context, pod *corev1.Pod) error {
	opts := metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      metav1.NewUIDPreconditions(string(pod.UID)),
	}
	if err := k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, opts); err != nil {
		return fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	k.log.V(1).Info("Pod deleted", "pod", ref(pod))
	return nil
}

// ref names pod in logs.
func ref(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }
