package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// obj builds an object from a compact spec: "apiVersion Kind ns/name" plus
// annotations as key=value pairs. A name ending in "*" is a generateName.
func obj(t *testing.T, id string, annotations ...string) *unstructured.Unstructured {
	t.Helper()
	f := strings.Fields(id)
	if len(f) != 3 {
		t.Fatalf("bad object id %q", id)
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(f[0])
	u.SetKind(f[1])
	ns, name, ok := strings.Cut(f[2], "/")
	if !ok {
		ns, name = "", f[2]
	}
	u.SetNamespace(ns)
	if gen, ok := strings.CutSuffix(name, "*"); ok {
		u.SetGenerateName(gen)
	} else {
		u.SetName(name)
	}
	if len(annotations) > 0 {
		ann := map[string]string{}
		for _, kv := range annotations {
			k, v, _ := strings.Cut(kv, "=")
			ann[k] = v
		}
		u.SetAnnotations(ann)
	}
	return u
}

// summarize renders waves as one line per task.
func summarize(waves []Wave) []string {
	var out []string
	for _, w := range waves {
		for _, tk := range w.Tasks {
			if tk.Phase != w.Phase || tk.Wave != w.Wave {
				out = append(out, fmt.Sprintf("MISGROUPED %s/%d in %s/%d", tk.Phase, tk.Wave, w.Phase, w.Wave))
			}
			s := fmt.Sprintf("%s/%d %s", w.Phase, w.Wave, Describe(tk.Object))
			if tk.Hook {
				s += fmt.Sprintf(" hook%v", tk.HookDeletePolicies)
			}
			out = append(out, s)
		}
	}
	return out
}

func TestBuildOrder(t *testing.T) {
	tests := []struct {
		name string
		objs func(t *testing.T) []*unstructured.Unstructured
		want []string
	}{{
		name: "kind order then namespace and name",
		objs: func(t *testing.T) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{
				obj(t, "apps/v1 Deployment b/web"),
				obj(t, "v1 Service b/web"),
				obj(t, "example.com/v1 Widget b/w"),
				obj(t, "v1 ConfigMap b/z"),
				obj(t, "v1 ConfigMap a/z"),
				obj(t, "v1 ConfigMap b/a"),
				obj(t, "v1 Namespace b"),
				obj(t, "v1 Namespace a"),
				obj(t, "apiextensions.k8s.io/v1 CustomResourceDefinition widgets.example.com"),
				obj(t, "rbac.authorization.k8s.io/v1 ClusterRole r"),
				obj(t, "v1 Secret b/s"),
				obj(t, "v1 ServiceAccount b/sa"),
				obj(t, "networking.k8s.io/v1 Ingress b/web"),
				obj(t, "networking.k8s.io/v1 IngressClass nginx"),
				obj(t, "batch/v1 Job b/j"),
			}
		},
		want: []string{
			"Sync/0 Namespace a",
			"Sync/0 Namespace b",
			"Sync/0 ServiceAccount b/sa",
			"Sync/0 Secret b/s",
			"Sync/0 ConfigMap a/z",
			"Sync/0 ConfigMap b/a",
			"Sync/0 ConfigMap b/z",
			"Sync/0 CustomResourceDefinition.apiextensions.k8s.io widgets.example.com",
			"Sync/0 ClusterRole.rbac.authorization.k8s.io r",
			"Sync/0 Service b/web",
			"Sync/0 Deployment.apps b/web",
			"Sync/0 Job.batch b/j",
			"Sync/0 IngressClass.networking.k8s.io nginx",
			"Sync/0 Ingress.networking.k8s.io b/web",
			"Sync/0 Widget.example.com b/w",
		},
	}, {
		name: "waves negative and positive",
		objs: func(t *testing.T) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{
				obj(t, "v1 ConfigMap n/five", AnnotationSyncWave+"=5"),
				obj(t, "v1 ConfigMap n/zero"),
				obj(t, "v1 ConfigMap n/minus", AnnotationSyncWave+"=-2"),
				obj(t, "apps/v1 Deployment n/early", AnnotationSyncWave+"= -2 "),
				obj(t, "v1 Service n/five", AnnotationSyncWave+"=5"),
			}
		},
		want: []string{
			"Sync/-2 ConfigMap n/minus",
			"Sync/-2 Deployment.apps n/early",
			"Sync/0 ConfigMap n/zero",
			"Sync/5 ConfigMap n/five",
			"Sync/5 Service n/five",
		},
	}, {
		name: "argo cd hooks",
		objs: func(t *testing.T) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{
				obj(t, "batch/v1 Job n/smoke", AnnotationHook+"=PostSync", AnnotationHookDeletePolicy+"=HookSucceeded"),
				obj(t, "batch/v1 Job n/migrate-*", AnnotationHook+"=PreSync"),
				obj(t, "v1 ConfigMap n/app"),
				obj(t, "batch/v1 Job n/both", AnnotationHook+"=PreSync,PostSync", AnnotationSyncWave+"=1"),
				obj(t, "batch/v1 Job n/alert", AnnotationHook+"=SyncFail", AnnotationHookDeletePolicy+"=HookFailed,HookSucceeded"),
				obj(t, "v1 Pod n/during", AnnotationHook+"=Sync"),
				obj(t, "v1 ConfigMap n/skipped", AnnotationHook+"=Skip"),
				obj(t, "batch/v1 Job n/skip-but-presync", AnnotationHook+"=Skip,PreSync"),
				obj(t, "batch/v1 Job n/cleanup", AnnotationHook+"=PostDelete", AnnotationHookDeletePolicy+"=Never"),
			}
		},
		want: []string{
			"PreSync/0 Job.batch n/migrate-* hook[BeforeHookCreation]",
			"PreSync/0 Job.batch n/skip-but-presync hook[BeforeHookCreation]",
			"PreSync/1 Job.batch n/both hook[BeforeHookCreation]",
			"Sync/0 ConfigMap n/app",
			"Sync/0 Pod n/during hook[BeforeHookCreation]",
			"PostSync/0 Job.batch n/smoke hook[HookSucceeded]",
			"PostSync/1 Job.batch n/both hook[BeforeHookCreation]",
			"SyncFail/0 Job.batch n/alert hook[HookFailed HookSucceeded]",
			"PostDelete/0 Job.batch n/cleanup hook[Never]",
		},
	}, {
		name: "helm hooks",
		objs: func(t *testing.T) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{
				obj(t, "batch/v1 Job n/pre", AnnotationHelmHook+"=pre-install,pre-upgrade", AnnotationHelmHookWeight+"=-5",
					AnnotationHelmHookDeletePolicy+"=hook-succeeded,before-hook-creation"),
				obj(t, "batch/v1 Job n/post", AnnotationHelmHook+"=post-install", AnnotationHelmHookDeletePolicy+"=hook-failed"),
				obj(t, "v1 Pod n/test", AnnotationHelmHook+"=test"),
				obj(t, "apiextensions.k8s.io/v1 CustomResourceDefinition crd.example.com", AnnotationHelmHook+"=crd-install"),
				obj(t, "batch/v1 Job n/argo-wins", AnnotationHelmHook+"=pre-install", AnnotationHook+"=PostSync"),
				obj(t, "v1 ConfigMap n/weighted", AnnotationHelmHookWeight+"=3", AnnotationSyncWave+"=1"),
			}
		},
		want: []string{
			"PreSync/-5 Job.batch n/pre hook[HookSucceeded BeforeHookCreation]",
			"Sync/0 CustomResourceDefinition.apiextensions.k8s.io crd.example.com",
			"Sync/1 ConfigMap n/weighted",
			"PostSync/0 Job.batch n/argo-wins hook[BeforeHookCreation]",
			"PostSync/0 Job.batch n/post hook[HookFailed]",
		},
	}, {
		name: "namespace moved to the earliest wave using it",
		objs: func(t *testing.T) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{
				obj(t, "v1 Namespace team", AnnotationSyncWave+"=5"),
				obj(t, "v1 ConfigMap team/late", AnnotationSyncWave+"=9"),
				obj(t, "batch/v1 Job team/migrate", AnnotationHook+"=PreSync", AnnotationSyncWave+"=-1"),
				obj(t, "v1 Namespace other", AnnotationSyncWave+"=-3"),
				obj(t, "v1 ConfigMap other/x"),
			}
		},
		want: []string{
			"PreSync/-1 Namespace team",
			"PreSync/-1 Job.batch team/migrate hook[BeforeHookCreation]",
			"Sync/-3 Namespace other",
			"Sync/0 ConfigMap other/x",
			"Sync/9 ConfigMap team/late",
		},
	}, {
		name: "crd moved to the earliest wave of its resources",
		objs: func(t *testing.T) []*unstructured.Unstructured {
			crd := obj(t, "apiextensions.k8s.io/v1 CustomResourceDefinition widgets.example.com", AnnotationSyncWave+"=3")
			_ = unstructured.SetNestedField(crd.Object, "example.com", "spec", "group")
			_ = unstructured.SetNestedField(crd.Object, "Widget", "spec", "names", "kind")
			return []*unstructured.Unstructured{
				crd,
				obj(t, "example.com/v1 Widget n/w", AnnotationSyncWave+"=1"),
				obj(t, "example.com/v1 Gadget n/g"),
			}
		},
		want: []string{
			"Sync/0 Gadget.example.com n/g",
			"Sync/1 CustomResourceDefinition.apiextensions.k8s.io widgets.example.com",
			"Sync/1 Widget.example.com n/w",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			waves, err := Build(tt.objs(t))
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if diff := cmp.Diff(tt.want, summarize(waves)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildWaveGrouping(t *testing.T) {
	objs := []*unstructured.Unstructured{
		obj(t, "v1 ConfigMap n/a", AnnotationSyncWave+"=1"),
		obj(t, "v1 ConfigMap n/b", AnnotationSyncWave+"=1"),
		obj(t, "v1 ConfigMap n/c"),
		obj(t, "batch/v1 Job n/j", AnnotationHook+"=PreSync"),
	}
	waves, err := Build(objs)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	type shape struct {
		Phase Phase
		Wave  int
		N     int
	}
	var got []shape
	for _, w := range waves {
		got = append(got, shape{w.Phase, w.Wave, len(w.Tasks)})
	}
	want := []shape{{PhasePreSync, 0, 1}, {PhaseSync, 0, 1}, {PhaseSync, 1, 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("waves (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Wave{waves[0]}, Select(waves, PhasePreSync, PhaseSyncFail)); diff != "" {
		t.Errorf("Select (-want +got):\n%s", diff)
	}
}

func TestBuildSyncOptions(t *testing.T) {
	objs := []*unstructured.Unstructured{
		obj(t, "v1 ConfigMap n/keep", AnnotationSyncOptions+"=Prune=false, Validate=true"),
		obj(t, "v1 ConfigMap n/plain"),
	}
	waves, err := Build(objs, "Validate=false", "PruneLast=true")
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	got := map[string]SyncOptions{}
	for _, tk := range waves[0].Tasks {
		got[tk.Object.GetName()] = tk.SyncOptions
	}
	keep, plain := DefaultSyncOptions(), DefaultSyncOptions()
	keep.Prune, keep.PruneLast = false, true
	plain.Validate, plain.PruneLast = false, true
	if diff := cmp.Diff(map[string]SyncOptions{"keep": keep, "plain": plain}, got); diff != "" {
		t.Errorf("sync options (-want +got):\n%s", diff)
	}
}

// TestBuildHookTypesAsArgoCD: hook types and delete policies Argo CD does
// not know are dropped, not errors; an Argo CD hook annotation left with no
// known type, or Skip alone, leaves the object out; PreDelete and
// PostDelete hooks (Argo CD's and Helm's) never run in a sync.
func TestBuildHookTypesAsArgoCD(t *testing.T) {
	objs := []*unstructured.Unstructured{
		obj(t, "batch/v1 Job n/typo", AnnotationHook+"=PreSynk"),
		obj(t, "batch/v1 Job n/mixed", AnnotationHook+"=PreSync,PreSynk", AnnotationHookDeletePolicy+"=Always,HookSucceeded"),
		obj(t, "v1 ConfigMap n/skipped", AnnotationHook+"=Skip"),
		obj(t, "batch/v1 Job n/pre-delete", AnnotationHook+"=PreDelete"),
		obj(t, "batch/v1 Job n/helm-pre-delete", AnnotationHelmHook+"=pre-delete"),
		obj(t, "batch/v1 Job n/post-delete", AnnotationHook+"=PostDelete"),
	}
	waves, err := Build(objs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range waves {
		for _, task := range w.Tasks {
			got = append(got, fmt.Sprintf("%s %s %v", w.Phase, task.Object.GetName(), task.HookDeletePolicies))
		}
	}
	want := []string{
		"PreSync mixed [HookSucceeded]",
		"PreDelete helm-pre-delete [BeforeHookCreation]",
		"PreDelete pre-delete [BeforeHookCreation]",
		"PostDelete post-delete [BeforeHookCreation]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		obj     *unstructured.Unstructured
		ignored bool
		unknown []string
	}{
		{objs[0], true, []string{"argocd.argoproj.io/hook: PreSynk"}},
		{objs[1], false, []string{"argocd.argoproj.io/hook: PreSynk", "argocd.argoproj.io/hook-delete-policy: Always"}},
		{objs[2], true, nil},
		{objs[3], false, nil},
	} {
		if Ignored(tc.obj) != tc.ignored || !cmp.Equal(UnknownHookValues(tc.obj), tc.unknown) {
			t.Errorf("%s: Ignored %v, UnknownHookValues %q; want %v, %q", tc.obj.GetName(), Ignored(tc.obj), UnknownHookValues(tc.obj), tc.ignored, tc.unknown)
		}
		if IsHook(tc.obj) == tc.ignored && tc.obj.GetName() != "skipped" && tc.obj.GetName() != "typo" {
			t.Errorf("%s: IsHook %v", tc.obj.GetName(), IsHook(tc.obj))
		}
	}
	for _, p := range []Phase{PhasePreDelete, PhasePostDelete, PhaseSyncFail} {
		if p.OnSync() {
			t.Errorf("%s runs in a sync", p)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name    string
		objs    func(t *testing.T) []*unstructured.Unstructured
		appOpts []string
		want    string
	}{{
		name: "bad wave",
		objs: func(t *testing.T) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{obj(t, "v1 ConfigMap n/bad", AnnotationSyncWave+"=first")}
		},
		want: `build plan: ConfigMap n/bad: annotation argocd.argoproj.io/sync-wave: "first" is not an integer`,
	}, {
		name: "bad helm weight",
		objs: func(t *testing.T) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{obj(t, "batch/v1 Job n/j", AnnotationHelmHook+"=pre-install", AnnotationHelmHookWeight+"=1.5")}
		},
		want: `build plan: Job.batch n/j: annotation helm.sh/hook-weight: "1.5" is not an integer`,
	}, {
		name: "ordinary object without name",
		objs: func(t *testing.T) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{obj(t, "v1 ConfigMap n/gen-*")}
		},
		want: `build plan: ConfigMap n/gen-*: metadata.name must be set (generateName is only allowed on hooks)`,
	}, {
		name: "duplicate",
		objs: func(t *testing.T) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{obj(t, "apps/v1 Deployment n/d"), obj(t, "v1 ConfigMap n/x"), obj(t, "apps/v1beta2 Deployment n/d")}
		},
		want: `build plan: Deployment.apps n/d: defined twice (objects 0 and 2)`,
	}, {
		name: "bad sync option annotation",
		objs: func(t *testing.T) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{obj(t, "v1 ConfigMap n/x", AnnotationSyncOptions+"=Prune=maybe")}
		},
		want: `build plan: ConfigMap n/x: parse sync option "Prune=maybe": want true, false or confirm, got "maybe"`,
	}, {
		name: "bad application option",
		objs: func(t *testing.T) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{obj(t, "v1 ConfigMap n/x")}
		},
		appOpts: []string{"CreateNamespace"},
		want:    `build plan: application sync options: parse sync option "CreateNamespace": want Key=value`,
	}, {
		name: "nil object",
		objs: func(t *testing.T) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{obj(t, "v1 ConfigMap n/x"), nil}
		},
		want: `build plan: object 1 is nil`,
	}, {
		name: "no kind",
		objs: func(t *testing.T) []*unstructured.Unstructured {
			u := &unstructured.Unstructured{}
			u.SetName("x")
			return []*unstructured.Unstructured{u}
		},
		want: `build plan: object x: apiVersion and kind must be set`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(tt.objs(t), tt.appOpts...)
			if err == nil {
				t.Fatalf("Build: want error %q, got nil", tt.want)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildDoesNotModifyInput(t *testing.T) {
	src := `apiVersion: v1
kind: Namespace
metadata:
  name: team
  annotations:
    argocd.argoproj.io/sync-wave: "4"
`
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(src), &u.Object); err != nil {
		t.Fatal(err)
	}
	before := u.DeepCopy()
	cm := obj(t, "v1 ConfigMap team/c")
	if _, err := Build([]*unstructured.Unstructured{u, cm}); err != nil {
		t.Fatalf("Build: %v", err)
	}
	if diff := cmp.Diff(before.Object, u.Object); diff != "" {
		t.Errorf("input modified (-before +after):\n%s", diff)
	}
}
