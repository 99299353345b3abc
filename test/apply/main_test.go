// Package apply_test runs engine/apply/plan and engine/apply against a real API
// server (test/envtest). There is no kubelet and no controller manager: a
// Deployment never becomes available and a Job never runs by itself, so the
// tests write their status subresource to play the controllers' part.
package apply_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/apply"
	"github.com/tollgate-dev/tollgate/engine/apply/plan"
	"github.com/tollgate-dev/tollgate/test/envtest"
)

var (
	env     *envtest.Env
	applier *apply.Applier
	calls   apply.CallCounter
)

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{CRDDirectoryPaths: []string{}}, func(e *envtest.Env) error {
		env = e
		var err error
		applier, err = newApplier(30*time.Second, &calls)
		return err
	}))
}

// newApplier builds an Applier on its own client, counting its calls.
func newApplier(waitTimeout time.Duration, counter *apply.CallCounter) (*apply.Applier, error) {
	cfg := rest.CopyConfig(env.Config)
	if counter != nil {
		cfg.Wrap(counter.Wrap)
	}
	return apply.NewForConfig(cfg, apply.Options{
		WaitTimeout:  waitTimeout,
		PollInterval: 100 * time.Millisecond,
		Health:       testHealth,
	})
}

// testHealth is a small stand-in for engine/health: Deployments by
// availability and the ProgressDeadlineExceeded condition, Jobs by their
// Complete and Failed conditions, everything else Healthy.
func testHealth(obj *unstructured.Unstructured) (string, string, error) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	cond := func(typ string) (status, reason, message string) {
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == typ {
				s, _ := m["status"].(string)
				r, _ := m["reason"].(string)
				msg, _ := m["message"].(string)
				return s, r, msg
			}
		}
		return "", "", ""
	}
	switch obj.GetKind() {
	case "Deployment":
		if s, r, msg := cond("Progressing"); s == "False" && r == "ProgressDeadlineExceeded" {
			return apply.HealthDegraded, msg, nil
		}
		want, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
		if !found {
			want = 1
		}
		avail, _, _ := unstructured.NestedInt64(obj.Object, "status", "availableReplicas")
		observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
		if observed >= obj.GetGeneration() && avail >= want {
			return apply.HealthHealthy, "", nil
		}
		return apply.HealthProgressing, fmt.Sprintf("%d of %d replicas available", avail, want), nil
	case "Job":
		if s, _, msg := cond("Failed"); s == "True" {
			return apply.HealthDegraded, msg, nil
		}
		if s, _, _ := cond("Complete"); s == "True" {
			return apply.HealthHealthy, "", nil
		}
		return apply.HealthProgressing, "running", nil
	}
	return apply.HealthHealthy, "", nil
}

// decode reads multi-document YAML, putting namespaced objects (everything
// but Namespaces and CRDs in these tests) in ns.
func decode(t *testing.T, ns, src string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(src, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatalf("yaml: %v", err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(j); err != nil {
			t.Fatalf("decode: %v", err)
		}
		switch u.GetKind() {
		case "Namespace", "CustomResourceDefinition":
		default:
			u.SetNamespace(ns)
		}
		out = append(out, u)
	}
	return out
}

// build plans objs for app, as the engine does: tracking set first.
func build(t *testing.T, app string, objs []*unstructured.Unstructured, appOpts ...string) []plan.Wave {
	t.Helper()
	for _, o := range objs {
		if o.GetName() != "" {
			v1alpha1.SetTracking(o, app, "")
		}
	}
	waves, err := plan.Build(objs, appOpts...)
	if err != nil {
		t.Fatalf("plan.Build: %v", err)
	}
	return waves
}

// get reads one object; nil when it does not exist.
func get(t *testing.T, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, u)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", kind, ns, name, err)
	}
	return u
}

// whenReady runs update on the object's status once it exists and ready
// accepts it, in the background: ApplyWave blocks while it waits for
// health. The returned channel is closed after update ran; errors are
// reported with t.Error.
func whenReady(t *testing.T, apiVersion, kind, ns, name string, ready func(*unstructured.Unstructured) bool, update func(*unstructured.Unstructured)) <-chan struct{} {
	done := make(chan struct{})
	ctx := t.Context()
	key := client.ObjectKey{Namespace: ns, Name: name}
	fresh := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		return u
	}
	go func() {
		defer close(done)
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			u := fresh()
			err := env.Client.Get(ctx, key, u)
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil && ready(u), err
		})
		if err != nil {
			t.Errorf("wait for %s %s/%s: %v", kind, ns, name, err)
			return
		}
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			u := fresh()
			if err := env.Client.Get(ctx, key, u); err != nil {
				return err
			}
			update(u)
			return env.Client.Status().Update(ctx, u)
		})
		if err != nil {
			t.Errorf("update status of %s %s/%s: %v", kind, ns, name, err)
		}
	}()
	return done
}

// anyObject accepts the object as soon as it exists.
func anyObject(*unstructured.Unstructured) bool { return true }

// notUID accepts an object other than the one with uid (a re-created one).
func notUID(uid string) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool { return string(u.GetUID()) != uid }
}

// hasReplicas accepts a Deployment once spec.replicas is n (our apply
// landed).
func hasReplicas(n int64) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		got, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		return got == n
	}
}

// available plays the Deployment controller: the rollout is complete.
func available(u *unstructured.Unstructured) {
	replicas, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found {
		replicas = 1
	}
	_ = unstructured.SetNestedMap(u.Object, map[string]any{
		"observedGeneration": u.GetGeneration(),
		"replicas":           replicas,
		"updatedReplicas":    replicas,
		"readyReplicas":      replicas,
		"availableReplicas":  replicas,
	}, "status")
}

// stuck plays the Deployment controller giving up on a rollout.
func stuck(u *unstructured.Unstructured) {
	_ = unstructured.SetNestedField(u.Object, map[string]any{
		"observedGeneration": u.GetGeneration(),
		"conditions": []any{map[string]any{
			"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
			"message":            `ReplicaSet "web-1" has timed out progressing.`,
			"lastUpdateTime":     "2024-01-01T00:00:00Z",
			"lastTransitionTime": "2024-01-01T00:00:00Z",
		}},
	}, "status")
}

// completed plays the Job controller: the Job succeeded.
func completed(u *unstructured.Unstructured) {
	now := time.Now().UTC().Format(time.RFC3339)
	cond := func(typ string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "lastProbeTime": now, "lastTransitionTime": now}
	}
	_ = unstructured.SetNestedMap(u.Object, map[string]any{
		"startTime":      now,
		"completionTime": now,
		"succeeded":      int64(1),
		"conditions":     []any{cond("SuccessCriteriaMet"), cond("Complete")},
	}, "status")
}

// waveError returns err as a *apply.WaveError or fails the test.
func waveError(t *testing.T, err error) *apply.WaveError {
	t.Helper()
	var werr *apply.WaveError
	if !errors.As(err, &werr) {
		t.Fatalf("error = %v, want a *apply.WaveError", err)
	}
	return werr
}

// cleanup deletes obj after a test (t.Context is done by then).
func cleanup(obj client.Object) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = env.Client.Delete(ctx, obj)
}
