// Package kubelet_test runs the simulated kubelet of `tollgate dev`
// (devstack/kubelet) against a real API server (test/envtest).
// There is no controller manager here, so the tests create Pods directly
// instead of Deployments and Jobs. Each test starts its own kubelet, on a
// Node named after the test's namespace, and stops it when it ends.
package kubelet_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/devstack/kubelet"
	"github.com/tollgate-dev/tollgate/test/envtest"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{CRDDirectoryPaths: []string{}}, func(e *envtest.Env) error {
		env = e
		return nil
	}))
}

// timeout bounds every wait; generous for a busy machine.
const timeout = 60 * time.Second

// start runs the kubelet for the rest of the test, on a Node named node, and
// checks when the test ends that Run returned nil once its context was
// cancelled.
func start(t *testing.T, node string, opts kubelet.Options) {
	t.Helper()
	opts.NodeName = node
	ctx := logr.NewContext(t.Context(), testr.NewWithOptions(t, testr.Options{Verbosity: 1}))
	done := make(chan error, 1)
	go func() { done <- kubelet.Run(ctx, env.Config, opts) }()
	t.Cleanup(func() {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run() = %v, want nil after its context ended", err)
			}
		case <-time.After(timeout):
			t.Errorf("Run did not return within %s after its context ended", timeout)
		}
	})
}

// fastOptions are DefaultOptions with short delays.
func fastOptions() kubelet.Options {
	opts := kubelet.DefaultOptions()
	opts.JobRunTime = 200 * time.Millisecond
	opts.LeaseRenewInterval = 200 * time.Millisecond
	return opts
}

// poll is how the tests wait for the kubelet.
var poll = testutil.Poll{Timeout: timeout, Interval: 100 * time.Millisecond}

// eventually waits until cond holds (poll.Eventually), giving it a context
// that ends with the wait.
func eventually(t *testing.T, desc string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), poll.Timeout)
	defer cancel()
	poll.Eventually(t, desc, func() (bool, string) { return cond(ctx) })
}

// waitPod polls the Pod ns/name until cond accepts it and returns it.
func waitPod(t *testing.T, ns, name, desc string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	eventually(t, fmt.Sprintf("pod %s/%s %s", ns, name, desc), func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
			return false, err.Error()
		}
		return cond(pod), fmt.Sprintf("node %q, phase %q, conditions %s", pod.Spec.NodeName, pod.Status.Phase, conditions(pod.Status.Conditions))
	})
	return pod
}

// newPod is an unscheduled Pod with an init container and one container.
func newPod(ns, name string, restart corev1.RestartPolicy) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			RestartPolicy:  restart,
			InitContainers: []corev1.Container{{Name: "migrate", Image: "busybox:1.36"}},
			Containers:     []corev1.Container{{Name: "app", Image: "nginx:1.27"}},
		},
	}
}

// create creates obj, deleting it when the test ends.
func create(t *testing.T, obj client.Object) {
	t.Helper()
	testutil.Create(t, env.Client, obj)
}

// conditions maps condition types to "Status" or "Status/Reason".
func conditions(conds []corev1.PodCondition) map[corev1.PodConditionType]string {
	out := map[corev1.PodConditionType]string{}
	for _, c := range conds {
		s := string(c.Status)
		if c.Reason != "" {
			s += "/" + c.Reason
		}
		out[c.Type] = s
	}
	return out
}

func running(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning }

// ignoreTimes leaves out the times a kubelet writes "now".
var ignoreTimes = cmp.Options{
	cmpopts.IgnoreFields(corev1.ContainerStateRunning{}, "StartedAt"),
	cmpopts.IgnoreFields(corev1.ContainerStateTerminated{}, "StartedAt", "FinishedAt"),
}

func TestNodeReadyAndLeaseRenewed(t *testing.T) {
	name := env.Namespace(t)
	start(t, name, fastOptions())

	node := &corev1.Node{}
	eventually(t, "node "+name+" Ready", func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			return false, err.Error()
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, "Ready " + string(c.Status)
			}
		}
		return false, "no Ready condition"
	})

	gotConds := map[corev1.NodeConditionType]corev1.ConditionStatus{}
	for _, c := range node.Status.Conditions {
		gotConds[c.Type] = c.Status
	}
	wantConds := map[corev1.NodeConditionType]corev1.ConditionStatus{
		corev1.NodeReady:          corev1.ConditionTrue,
		corev1.NodeMemoryPressure: corev1.ConditionFalse,
		corev1.NodeDiskPressure:   corev1.ConditionFalse,
		corev1.NodePIDPressure:    corev1.ConditionFalse,
	}
	if diff := cmp.Diff(wantConds, gotConds); diff != "" {
		t.Errorf("node conditions (-want +got):\n%s", diff)
	}
	wantRes := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("8"),
		corev1.ResourceMemory: resource.MustParse("32Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	sameQuantity := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
	if diff := cmp.Diff(wantRes, node.Status.Capacity, sameQuantity); diff != "" {
		t.Errorf("node capacity (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantRes, node.Status.Allocatable, sameQuantity); diff != "" {
		t.Errorf("node allocatable (-want +got):\n%s", diff)
	}
	wantAddr := []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "127.0.0.1"},
		{Type: corev1.NodeHostName, Address: name},
	}
	if diff := cmp.Diff(wantAddr, node.Status.Addresses); diff != "" {
		t.Errorf("node addresses (-want +got):\n%s", diff)
	}
	if got := node.Labels[corev1.LabelHostname]; got != name {
		t.Errorf("label %s = %q, want %q", corev1.LabelHostname, got, name)
	}

	lease := &coordinationv1.Lease{}
	getLease := func(ctx context.Context) (bool, string) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: name}, lease)
		if err != nil {
			return false, err.Error()
		}
		return lease.Spec.RenewTime != nil, "no renewTime"
	}
	eventually(t, "lease "+name, getLease)
	wantSpec := coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](40)}
	if diff := cmp.Diff(wantSpec, lease.Spec, cmpopts.IgnoreFields(coordinationv1.LeaseSpec{}, "RenewTime")); diff != "" {
		t.Errorf("lease spec (-want +got):\n%s", diff)
	}
	wantOwners := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: name, UID: node.UID}}
	if diff := cmp.Diff(wantOwners, lease.OwnerReferences); diff != "" {
		t.Errorf("lease owners (-want +got):\n%s", diff)
	}
	first := lease.Spec.RenewTime.Time
	eventually(t, "lease "+name+" renewed", func(ctx context.Context) (bool, string) {
		if ok, why := getLease(ctx); !ok {
			return false, why
		}
		return lease.Spec.RenewTime.After(first), "renewTime " + lease.Spec.RenewTime.String()
	})
}

func TestExistingNodeTakenOver(t *testing.T) {
	name := env.Namespace(t)
	create(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "platform"}}})
	start(t, name, fastOptions())

	node := &corev1.Node{}
	eventually(t, "node "+name+" Ready", func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			return false, err.Error()
		}
		return len(node.Status.Conditions) > 0, "no conditions"
	})
	for k, want := range map[string]string{"team": "platform", corev1.LabelHostname: name} {
		if got := node.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
}

func TestRunRefusedNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	err := kubelet.Run(ctx, env.Config, kubelet.Options{NodeName: "Not A Node Name"})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("Run() = %v, want the API server's Invalid error", err)
	}
}

func TestLongRunningPods(t *testing.T) {
	ns := env.Namespace(t)
	start(t, ns, fastOptions())
	for _, name := range []string{"web-1", "web-2"} {
		create(t, newPod(ns, name, corev1.RestartPolicyAlways))
	}
	sidecar := newPod(ns, "with-sidecar", corev1.RestartPolicyAlways)
	sidecar.Spec.InitContainers = append(sidecar.Spec.InitContainers, corev1.Container{
		Name: "proxy", Image: "envoy:1.30", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
	})
	create(t, sidecar)

	ips := map[string]string{}
	for _, name := range []string{"web-1", "web-2", "with-sidecar"} {
		pod := waitPod(t, ns, name, "Running", running)
		if pod.Spec.NodeName != ns {
			t.Errorf("%s: nodeName = %q, want %q", name, pod.Spec.NodeName, ns)
		}
		if pod.Status.HostIP != "127.0.0.1" {
			t.Errorf("%s: hostIP = %q, want 127.0.0.1", name, pod.Status.HostIP)
		}
		ip, err := netip.ParseAddr(pod.Status.PodIP)
		if err != nil || !netip.MustParsePrefix("10.244.0.0/16").Contains(ip) {
			t.Errorf("%s: podIP = %q, want an address in 10.244.0.0/16", name, pod.Status.PodIP)
		}
		if other, dup := ips[pod.Status.PodIP]; dup {
			t.Errorf("%s: podIP %s already given to %s", name, pod.Status.PodIP, other)
		}
		ips[pod.Status.PodIP] = name
		if pod.Status.StartTime == nil {
			t.Errorf("%s: no startTime", name)
		}

		wantConds := map[corev1.PodConditionType]string{
			corev1.PodScheduled: "True", corev1.PodReadyToStartContainers: "True", corev1.PodInitialized: "True",
			corev1.ContainersReady: "True", corev1.PodReady: "True",
		}
		if diff := cmp.Diff(wantConds, conditions(pod.Status.Conditions)); diff != "" {
			t.Errorf("%s: conditions (-want +got):\n%s", name, diff)
		}
		id := func(c string) string { return fmt.Sprintf("tollgate-dev://%s-%s", pod.UID, c) }
		wantMain := []corev1.ContainerStatus{{
			Name: "app", Image: "nginx:1.27", ImageID: "tollgate-dev://nginx:1.27", ContainerID: id("app"),
			Ready: true, Started: ptr.To(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		}}
		if diff := cmp.Diff(wantMain, pod.Status.ContainerStatuses, ignoreTimes); diff != "" {
			t.Errorf("%s: containerStatuses (-want +got):\n%s", name, diff)
		}
		wantInit := []corev1.ContainerStatus{{
			Name: "migrate", Image: "busybox:1.36", ImageID: "tollgate-dev://busybox:1.36", ContainerID: id("migrate"),
			Ready: true, Started: ptr.To(false), State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", ContainerID: id("migrate"),
			}},
		}}
		if name == "with-sidecar" {
			wantInit = append(wantInit, corev1.ContainerStatus{
				Name: "proxy", Image: "envoy:1.30", ImageID: "tollgate-dev://envoy:1.30", ContainerID: id("proxy"),
				Ready: true, Started: ptr.To(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			})
		}
		if diff := cmp.Diff(wantInit, pod.Status.InitContainerStatuses, ignoreTimes); diff != "" {
			t.Errorf("%s: initContainerStatuses (-want +got):\n%s", name, diff)
		}
	}
}

func TestJobPodsSucceed(t *testing.T) {
	start(t, "job-pods", fastOptions())
	for _, restart := range []corev1.RestartPolicy{corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure} {
		t.Run(string(restart), func(t *testing.T) {
			ns := env.Namespace(t)
			create(t, newPod(ns, "job", restart))
			pod := waitPod(t, ns, "job", "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })

			if pod.Spec.NodeName != "job-pods" {
				t.Errorf("nodeName = %q, want job-pods", pod.Spec.NodeName)
			}
			wantConds := map[corev1.PodConditionType]string{
				corev1.PodScheduled: "True", corev1.PodReadyToStartContainers: "True", corev1.PodInitialized: "True",
				corev1.ContainersReady: "False/PodCompleted", corev1.PodReady: "False/PodCompleted",
			}
			if diff := cmp.Diff(wantConds, conditions(pod.Status.Conditions)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			id := fmt.Sprintf("tollgate-dev://%s-app", pod.UID)
			want := []corev1.ContainerStatus{{
				Name: "app", Image: "nginx:1.27", ImageID: "tollgate-dev://nginx:1.27", ContainerID: id,
				Ready: false, Started: ptr.To(false), State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", ContainerID: id,
				}},
			}}
			if diff := cmp.Diff(want, pod.Status.ContainerStatuses, ignoreTimes); diff != "" {
				t.Errorf("containerStatuses (-want +got):\n%s", diff)
			}
			term := pod.Status.ContainerStatuses[0].State.Terminated
			if term.FinishedAt.Before(&term.StartedAt) {
				t.Errorf("container finished at %s, before it started at %s", term.FinishedAt, term.StartedAt)
			}
		})
	}
}

func TestDeletedPodDisappears(t *testing.T) {
	ns := env.Namespace(t)
	start(t, ns, fastOptions())
	pod := newPod(ns, "web", corev1.RestartPolicyAlways)
	create(t, pod)
	waitPod(t, ns, "web", "Running", running)

	// The default grace period (30s): only the kubelet ends it sooner.
	if err := env.Client.Delete(t.Context(), pod); err != nil {
		t.Fatalf("delete: %v", err)
	}
	eventually(t, "pod web gone", func(ctx context.Context) (bool, string) {
		got := &corev1.Pod{}
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), got)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, fmt.Sprintf("still there, deletionTimestamp %v", got.DeletionTimestamp)
	})
}

func TestReadinessGate(t *testing.T) {
	ns := env.Namespace(t)
	start(t, ns, fastOptions())
	const gate = corev1.PodConditionType("example.com/load-balancer")
	pod := newPod(ns, "gated", corev1.RestartPolicyAlways)
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}}
	create(t, pod)
	got := waitPod(t, ns, "gated", "Running", running)
	if c := conditions(got.Status.Conditions)[corev1.PodReady]; c != "False/ReadinessGatesNotReady" {
		t.Errorf("Ready = %q before the gate holds, want False/ReadinessGatesNotReady", c)
	}

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(pod), got); err != nil {
			return err
		}
		got.Status.Conditions = append(got.Status.Conditions, corev1.PodCondition{Type: gate, Status: corev1.ConditionTrue})
		return env.Client.Status().Update(t.Context(), got)
	})
	if err != nil {
		t.Fatalf("set readiness gate: %v", err)
	}
	waitPod(t, ns, "gated", "Ready", func(p *corev1.Pod) bool {
		return conditions(p.Status.Conditions)[corev1.PodReady] == "True"
	})
}

func TestOtherPodsLeftAlone(t *testing.T) {
	ns := env.Namespace(t)
	start(t, ns, fastOptions())
	elsewhere := newPod(ns, "elsewhere", corev1.RestartPolicyAlways)
	elsewhere.Spec.NodeName = "another-node"
	create(t, elsewhere)
	gated := newPod(ns, "gated", corev1.RestartPolicyAlways)
	gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/quota"}}
	create(t, gated)
	// Created last: once it runs, the kubelet has seen the two others.
	create(t, newPod(ns, "sentinel", corev1.RestartPolicyAlways))
	waitPod(t, ns, "sentinel", "Running", running)

	for _, tc := range []struct{ name, node string }{{"elsewhere", "another-node"}, {"gated", ""}} {
		got := &corev1.Pod{}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: tc.name}, got); err != nil {
			t.Fatalf("get %s: %v", tc.name, err)
		}
		if got.Spec.NodeName != tc.node || got.Status.Phase != corev1.PodPending || got.Status.PodIP != "" {
			t.Errorf("%s: node %q, phase %s, podIP %q; want node %q, Pending, no IP", tc.name, got.Spec.NodeName, got.Status.Phase, got.Status.PodIP, tc.node)
		}
	}
}
