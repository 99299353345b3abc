// Package kubelet is a simulated kubelet for `tollgate dev`, which runs etcd,
// kube-apiserver and kube-controller-manager on a laptop without a container
// runtime, a scheduler or a real kubelet.
//
// Nothing runs. No image is pulled, no container or process is started, no
// probe is executed, no volume is mounted and there is no pod network: the
// package only writes to the API server what a scheduler and a kubelet would
// write if everything worked. It
//
//   - registers one Node, Ready with room for 110 pods, and keeps its Lease
//     in kube-node-lease renewed so that the node lifecycle controller keeps
//     it Ready;
//   - binds every Pod without a node to that Node, as the scheduler would
//     (node selectors, affinity, taints and resources are not considered;
//     only scheduling gates are honoured);
//   - reports the Pods bound to that Node Running and Ready with made-up
//     IPs from 10.244.0.0/16, each container "started" with the image its
//     spec names and init containers "exited 0";
//   - reports Pods with restartPolicy Never or OnFailure Succeeded, every
//     container "exited 0", Options.JobRunTime after they started running;
//   - confirms the deletion of Pods being deleted, at once, as a kubelet does
//     once containers have stopped.
//
// That is what Deployments need to become Available, Jobs Complete, rollouts
// and namespace deletion to finish; it is not a test of the workloads
// themselves. Pods bound to any other node are left alone.
package kubelet

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// Options configures Run. DefaultOptions() fills NodeName "tollgate-dev" and
// sensible delays; Run takes the default for every zero field.
type Options struct {
	// NodeName names the Node, and its Lease, that Run registers.
	NodeName string
	// JobRunTime: how long a Pod with restartPolicy Never/OnFailure "runs"
	// before it is marked Succeeded (default 1s).
	JobRunTime time.Duration
	// LeaseRenewInterval is how often the node's Lease is renewed (default
	// 10s, as the real kubelet; the Lease lasts 40s).
	LeaseRenewInterval time.Duration
	// Clock gives the time written in statuses and paces the Lease and Job
	// pods (default the real clock).
	Clock clock.WithTicker
}

// DefaultOptions returns the Options `tollgate dev` uses.
func DefaultOptions() Options {
	return Options{
		NodeName:           "tollgate-dev",
		JobRunTime:         time.Second,
		LeaseRenewInterval: 10 * time.Second,
		Clock:              clock.RealClock{},
	}
}

// withDefaults returns o with every zero field taken from DefaultOptions.
func (o Options) withDefaults() Options {
	def := DefaultOptions()
	if o.NodeName == "" {
		o.NodeName = def.NodeName
	}
	if o.JobRunTime == 0 {
		o.JobRunTime = def.JobRunTime
	}
	if o.LeaseRenewInterval <= 0 {
		o.LeaseRenewInterval = def.LeaseRenewInterval
	}
	if o.Clock == nil {
		o.Clock = def.Clock
	}
	return o
}

// workers is how many Pods are handled at once; one Pod is never handled by
// two workers at the same time (the workqueue guarantees it).
const workers = 4

// kubelet is the state of one Run.
type kubelet struct {
	opts   Options
	client kubernetes.Interface
	pods   corelisters.PodLister
	queue  workqueue.TypedRateLimitingInterface[string]
	log    logr.Logger

	// nodeUID owns the Lease, so that deleting the Node deletes it.
	nodeUID types.UID
	// lastIP is the offset in 10.244.0.0/16 of the last pod IP handed out.
	lastIP atomic.Uint32

	mu sync.Mutex
	// started records when this process reported a Pod Running, by key.
	// Statuses hold times to the second only; this keeps JobRunTime exact.
	started map[string]startRecord
}

type startRecord struct {
	uid types.UID
	at  time.Time
}

// Run creates (or updates) the Node, keeps its Lease in kube-node-lease
// renewed, and handles Pods until ctx ends. It returns nil when ctx is
// cancelled, an error when it cannot start (e.g. the API server refuses the
// Node).
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	opts = opts.withDefaults()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	k := &kubelet{
		opts:   opts,
		client: cs,
		log:    logr.FromContextOrDiscard(ctx).WithValues("node", opts.NodeName),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Clock: opts.Clock},
		),
		started: map[string]startRecord{},
	}
	defer k.queue.ShutDown()

	if err := k.registerNode(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	k.log.Info("Node registered, simulating a kubelet: nothing really runs")

	factory := informers.NewSharedInformerFactory(cs, 0)
	podInformer := factory.Core().V1().Pods()
	k.pods = podInformer.Lister()
	if _, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    k.enqueue,
		UpdateFunc: func(_, obj any) { k.enqueue(obj) },
		DeleteFunc: k.enqueue,
	}); err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	defer factory.Shutdown()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	wg.Go(func() { k.keepLease(ctx) })
	factory.StartWithContext(ctx)
	if res := factory.WaitForCacheSyncWithContext(ctx); res.Err != nil {
		// Only a done ctx stops the wait.
		return nil
	}
	k.seedIPs()
	for range workers {
		wg.Go(func() {
			for k.processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	k.queue.ShutDown()
	k.log.Info("Stopping the simulated kubelet")
	return nil
}

// enqueue queues a Pod unless it is bound to another node.
func (k *kubelet) enqueue(obj any) {
	if pod, ok := obj.(*corev1.Pod); ok && pod.Spec.NodeName != "" && pod.Spec.NodeName != k.opts.NodeName {
		return
	}
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	k.queue.Add(key)
}

// processNext handles one key from the queue; false once the queue is shut
// down.
func (k *kubelet) processNext(ctx context.Context) bool {
	key, quit := k.queue.Get()
	if quit {
		return false
	}
	defer k.queue.Done(key)
	err := k.sync(ctx, key)
	switch {
	case err == nil:
		k.queue.Forget(key)
	case ctx.Err() != nil:
		// Shutting down: the error is the cancellation.
	case apierrors.IsConflict(err):
		k.log.V(1).Info("Pod changed meanwhile, retrying", "pod", key, "reason", err.Error())
		k.queue.AddRateLimited(key)
	default:
		k.log.Error(err, "Pod not handled, retrying", "pod", key)
		k.queue.AddRateLimited(key)
	}
	return true
}
