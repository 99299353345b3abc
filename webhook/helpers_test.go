package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

// builtinEvaluator compiles the built-in rules once per test binary.
var builtinEvaluator = sync.OnceValues(func() (*policies.Evaluator, error) {
	return policies.New(context.Background(), policies.DefaultOptions())
})

// evaluator returns the shared built-in evaluator.
func evaluator(t testing.TB) *policies.Evaluator {
	t.Helper()
	e, err := builtinEvaluator()
	if err != nil {
		t.Fatalf("compile built-in policies: %v", err)
	}
	return e
}

// newReader returns a cache-like reader over objs (Applications and
// AppProjects, as maps), typed as the manager's cache holds them, with
// Applications indexed by project.
func newReader(t testing.TB, objs ...map[string]any) client.Reader {
	t.Helper()
	b := fake.NewClientBuilder().WithScheme(testutil.Scheme(t)).
		WithIndex(&v1alpha1.Application{}, ProjectIndexField, ProjectIndexValue)
	for _, o := range objs {
		var obj client.Object
		switch kind, _ := o["kind"].(string); kind {
		case v1alpha1.ApplicationKind:
			obj = &v1alpha1.Application{}
		case v1alpha1.AppProjectKind:
			obj = &v1alpha1.AppProject{}
		default:
			t.Fatalf("newReader: %s is neither an Application nor an AppProject", kind)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(deepCopy(o), obj); err != nil {
			t.Fatalf("newReader: %v", err)
		}
		if obj.GetUID() == "" { // as the API server gives every object
			obj.SetUID(types.UID(fmt.Sprintf("%s-%s-%s", o["kind"], obj.GetNamespace(), obj.GetName())))
		}
		b = b.WithObjects(obj)
	}
	return b.Build()
}

// failingReader fails every read.
type failingReader struct{}

func (failingReader) Get(context.Context, types.NamespacedName, client.Object, ...client.GetOption) error {
	return errors.New("cache not synced")
}

func (failingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("cache not synced")
}

// evaluatorFunc adapts a function to Evaluator.
type evaluatorFunc func(context.Context, policies.Input) (policies.Decision, error)

func (f evaluatorFunc) Evaluate(ctx context.Context, in policies.Input) (policies.Decision, error) {
	return f(ctx, in)
}

// newHandler returns a handler over the built-in evaluator and a reader of
// objs, with the own namespace tollgate-system.
func newHandler(t testing.TB, cfg Config, objs ...map[string]any) *Handler {
	t.Helper()
	opts := DefaultOptions()
	opts.Config = cfg
	opts.Evaluator = evaluator(t)
	if len(cfg.Rules) > 0 || cfg.ArgoCDNamespace != "" {
		// The evaluator applies the policy configuration itself.
		popts := policies.DefaultOptions()
		popts.Config = cfg.Config
		e, err := policies.New(t.Context(), popts)
		if err != nil {
			t.Fatalf("compile policies: %v", err)
		}
		opts.Evaluator = e
	}
	opts.Reader = newReader(t, objs...)
	opts.Namespace = "tollgate-system"
	h, err := NewHandler(opts)
	if err != nil {
		t.Fatalf("NewHandler: %v", err)
	}
	return h
}

// decide returns h's response to req, failing the test when h could not
// decide it.
func decide(t *testing.T, h *Handler, req admission.Request) admission.Response {
	t.Helper()
	resp, err := h.Decide(t.Context(), req)
	if err != nil {
		t.Fatalf("Decide() error: %v", err)
	}
	return resp
}

// deepCopy copies a JSON-like object.
func deepCopy(obj map[string]any) map[string]any {
	return runtime.DeepCopyJSON(normalize(obj))
}

// normalize round-trips obj through JSON so that it holds only JSON types.
func normalize(obj map[string]any) map[string]any {
	b, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		panic(err)
	}
	return fixNumbers(out).(map[string]any)
}

// fixNumbers turns json.Numbers into int64 or float64, as DeepCopyJSON
// wants them.
func fixNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = fixNumbers(e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = fixNumbers(e)
		}
		return v
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	default:
		return v
	}
}

// --- objects ---------------------------------------------------------------

// meta builds metadata with optional labels and annotations.
func meta(ns, name string, kv ...map[string]any) map[string]any {
	m := map[string]any{"name": name}
	if ns != "" {
		m["namespace"] = ns
	}
	if len(kv) > 0 && kv[0] != nil {
		m["labels"] = kv[0]
	}
	if len(kv) > 1 && kv[1] != nil {
		m["annotations"] = kv[1]
	}
	return m
}

func deployment(ns, name, image string) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   meta(ns, name),
		"spec": map[string]any{
			"replicas": 2,
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "app", "image": image},
				}},
			},
		},
	}
}

func pod(ns, name, image string) map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   meta(ns, name),
		"spec": map[string]any{"containers": []any{
			map[string]any{"name": "app", "image": image},
		}},
	}
}

// ephemeral builds an ephemeral container as kubectl debug adds it.
func ephemeral(name, image string) map[string]any {
	return map[string]any{"name": name, "image": image, "targetContainerName": "app"}
}

// debugRequest is the pods/ephemeralcontainers UPDATE that adds containers
// to the ephemeral containers of old, as kubectl debug sends it.
func debugRequest(old map[string]any, added ...map[string]any) admission.Request {
	list, _ := ephemeralContainers(old)
	list = append([]any{}, list...)
	for _, c := range added {
		list = append(list, c)
	}
	r := request(admissionv1.Update, with(old, list, "spec", "ephemeralContainers"), old)
	r.SubResource = "ephemeralcontainers"
	return r
}

func secret(ns, name string) map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata":   meta(ns, name),
		"data":       map[string]any{"password": "aHVudGVyMg=="},
	}
}

func sealedSecret(ns, name string) map[string]any {
	return map[string]any{
		"apiVersion": "bitnami.com/v1alpha1",
		"kind":       "SealedSecret",
		"metadata":   meta(ns, name),
		"spec": map[string]any{
			"encryptedData": map[string]any{"password": "AgBy3i4OJSWK+PiTySYZZA=="},
		},
	}
}

// application builds an Application in argocd with the resources
// finalizer (so missing-resources-finalizer stays quiet).
func application(name, project, destNS string) map[string]any {
	md := meta("argocd", name)
	md["finalizers"] = []any{"resources-finalizer.argocd.argoproj.io"}
	return map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Application",
		"metadata":   md,
		"spec": map[string]any{
			"project": project,
			"source": map[string]any{
				"repoURL":        "https://github.com/example/apps.git",
				"path":           name,
				"targetRevision": "main",
			},
			"destination": map[string]any{
				"server":    "https://kubernetes.default.svc",
				"namespace": destNS,
			},
		},
	}
}

// appProject builds an AppProject in argocd allowing the example repository
// and the given destination namespaces on the in-cluster server.
func appProject(name string, namespaces ...string) map[string]any {
	dests := make([]any, len(namespaces))
	for i, ns := range namespaces {
		dests[i] = map[string]any{"server": "https://kubernetes.default.svc", "namespace": ns}
	}
	return map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "AppProject",
		"metadata":   meta("argocd", name),
		"spec": map[string]any{
			"sourceRepos":  []any{"https://github.com/example/*"},
			"destinations": dests,
		},
	}
}

// with returns a copy of obj with the value at path set.
func with(obj map[string]any, value any, path ...string) map[string]any {
	out := deepCopy(obj)
	cur := out
	for _, p := range path[:len(path)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[path[len(path)-1]] = value
	return out
}

// --- requests --------------------------------------------------------------

// request builds an admission request for obj (and old, for UPDATE and
// DELETE) by the user alice.
func request(op admissionv1.Operation, obj, old map[string]any) admission.Request {
	ref := obj
	if ref == nil {
		ref = old
	}
	apiVersion, _ := ref["apiVersion"].(string)
	kind, _ := ref["kind"].(string)
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok {
		group, version = "", apiVersion
	}
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID:       types.UID("req-1"),
		Kind:      metav1.GroupVersionKind{Group: group, Version: version, Kind: kind},
		Resource:  metav1.GroupVersionResource{Group: group, Version: version, Resource: strings.ToLower(kind) + "s"},
		Name:      stringAt(ref, "metadata", "name"),
		Namespace: stringAt(ref, "metadata", "namespace"),
		Operation: op,
		UserInfo:  authenticationv1.UserInfo{Username: "alice", Groups: []string{"system:authenticated"}},
	}}
	if obj != nil {
		req.Object = runtime.RawExtension{Raw: mustJSON(obj)}
	}
	if old != nil {
		req.OldObject = runtime.RawExtension{Raw: mustJSON(old)}
	}
	return req
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// --- responses -------------------------------------------------------------

// summary is the part of a response the decision tests compare.
type summary struct {
	Allowed bool
	Code    int32
	Reason  metav1.StatusReason
	// Denied holds the heads of the denial message's lines.
	Denied []string
	// Warnings holds the heads of the warnings.
	Warnings []string
}

// summarize reduces a response to a summary. A line's head is the line up
// to its first "] " (the rule id) or the whole line; rule messages belong to
// the policies' own tests.
func summarize(resp admission.Response) summary {
	s := summary{Allowed: resp.Allowed}
	if resp.Result != nil {
		s.Code = resp.Result.Code
		s.Reason = resp.Result.Reason
		if !resp.Allowed && resp.Result.Message != "" && resp.Result.Code == 403 {
			for _, line := range strings.Split(resp.Result.Message, "\n") {
				s.Denied = append(s.Denied, head(line))
			}
		}
	}
	for _, w := range resp.Warnings {
		s.Warnings = append(s.Warnings, head(w))
	}
	return s
}

func head(line string) string {
	if i := strings.Index(line, "] "); i >= 0 {
		return line[:i+1]
	}
	return line
}

// counterValue reads one counter of a vector.
func counterValue(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 100)
	c.Collect(ch)
	close(ch)
	var total float64
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatalf("read metric: %v", err)
		}
		switch {
		case pb.Counter != nil:
			total += pb.Counter.GetValue()
		case pb.Histogram != nil:
			total += float64(pb.Histogram.GetSampleCount())
		}
	}
	return total
}
