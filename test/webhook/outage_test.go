package webhook_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestWebhookKilledUnderLoad stops the webhook server while four clients
// write Deployments and Secrets as fast as they can, and starts it again
// later. With the shipped failure policies: the ordinary writes never
// fail; an Application write is refused while the webhook is down and
// succeeds, retried, once it is back (and never before); writes in
// kube-system, Leases and the webhook's own namespace are never blocked.
func TestWebhookKilledUnderLoad(t *testing.T) {
	ctx := t.Context()
	ns := env.Namespace(t)
	project := unique(t, ns, "outage")
	if err := env.Client.Create(ctx, appProject(project, ns)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tollgate-system"} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}

	// The load: Deployments and Secrets (both intercepted, failurePolicy
	// Ignore), created and updated until the test ends.
	loadCtx, stopLoad := context.WithCancel(ctx)
	var writes, failed atomic.Int64
	var firstFailure atomic.Value
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; loadCtx.Err() == nil; i++ {
				var err error
				name := fmt.Sprintf("load-%d-%d", w, i%20)
				if i%2 == 0 {
					d := deployment(ns, name, "registry.example.com/web:1.0.0")
					if err = env.Client.Create(loadCtx, d); apierrors.IsAlreadyExists(err) {
						patch := fmt.Sprintf(`{"metadata":{"annotations":{"tollgate.dev/write":"%d"}}}`, i)
						err = env.Client.Patch(loadCtx, d, client.RawPatch(types.MergePatchType, []byte(patch)))
					}
				} else {
					s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
						Annotations: map[string]string{"tollgate.dev/test": "load"}}, Type: corev1.SecretTypeOpaque}
					if err = env.Client.Create(loadCtx, s); apierrors.IsAlreadyExists(err) {
						err = nil
					}
				}
				if loadCtx.Err() != nil {
					return
				}
				writes.Add(1)
				if err != nil {
					failed.Add(1)
					firstFailure.CompareAndSwap(nil, err.Error())
				}
			}
		}()
	}
	defer func() {
		stopLoad()
		wg.Wait()
	}()
	// loadWrites waits until the load has written n more objects.
	loadWrites := func(when string, n int64) {
		t.Helper()
		from := writes.Load()
		poll.Eventually(t, fmt.Sprintf("%d writes of the load %s", n, when), func() (bool, string) {
			done := writes.Load() - from
			return done >= n, fmt.Sprintf("%d writes", done)
		})
	}
	loadWrites("with the webhook up", 20)

	stopWebhook()
	downAt := time.Now()
	restarted := false
	defer func() {
		if !restarted {
			stopWebhook, _ = serve(context.WithoutCancel(ctx))
		}
	}()

	// An Application waits for the webhook: retried until it is admitted.
	app := application(unique(t, ns, "waits"), project, ns)
	created := make(chan time.Time, 1)
	var refusals atomic.Int64
	go func() {
		for ctx.Err() == nil {
			err := env.Client.Create(ctx, app.DeepCopy())
			if err == nil {
				created <- time.Now()
				return
			}
			if !strings.Contains(err.Error(), "failed calling webhook") {
				t.Errorf("Application create while the webhook is down: %v, want a failed webhook call", err)
			}
			refusals.Add(1)
			time.Sleep(300 * time.Millisecond) // the client's retry interval
		}
	}()

	// Never blocked: kube-system, Leases, the webhook's own namespace.
	for _, obj := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: unique(t, ns, "cm")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: unique(t, ns, "s")}, StringData: map[string]string{"k": "v"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "tollgate-system", Name: unique(t, ns, "s")}, StringData: map[string]string{"k": "v"}},
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leader"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("me")}},
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: unique(t, ns, "lease")}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("me")}},
	} {
		start := time.Now()
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Errorf("create %T %s/%s while the webhook is down: %v", obj, obj.GetNamespace(), obj.GetName(), err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("create %T %s/%s took %s while the webhook is down", obj, obj.GetNamespace(), obj.GetName(), took)
		}
		defer func() { _ = env.Client.Delete(context.WithoutCancel(ctx), obj) }()
	}
	// The outage: the Application refused a few times, the load going on.
	poll.Eventually(t, "the Application to be refused three times", func() (bool, string) {
		return refusals.Load() >= 3, fmt.Sprintf("%d refusals", refusals.Load())
	})
	loadWrites("with the webhook down", 20)
	select {
	case at := <-created:
		t.Fatalf("the Application was admitted at %s, while the webhook was down (since %s)", at, downAt)
	default:
	}

	upAt := time.Now()
	var err error
	if stopWebhook, err = serve(context.WithoutCancel(ctx)); err != nil {
		t.Fatal(err)
	}
	restarted = true
	select {
	case at := <-created:
		if at.Before(upAt) {
			t.Fatalf("the Application was admitted at %s, before the webhook was started again at %s", at, upAt)
		}
		t.Logf("the Application was admitted %s after the webhook was started again, after %d refusals", at.Sub(upAt).Round(time.Millisecond), refusals.Load())
	case <-time.After(30 * time.Second):
		t.Fatal("the Application was not admitted within 30s of the webhook's return")
	}
	loadWrites("with the webhook up again", 20)
	stopLoad()
	wg.Wait()
	t.Logf("load: %d writes of Deployments and Secrets, %d failed, across %s of outage", writes.Load(), failed.Load(), upAt.Sub(downAt).Round(time.Millisecond))
	if failed.Load() > 0 {
		t.Errorf("%d of %d ordinary writes failed during the outage; first: %v", failed.Load(), writes.Load(), firstFailure.Load())
	}
	if refusals.Load() == 0 {
		t.Error("the Application was never refused while the webhook was down")
	}
}
