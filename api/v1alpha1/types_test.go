package v1alpha1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/yaml"
)

// fixtures are the testdata documents and the Go type each one decodes into.
var fixtures = []struct {
	file string
	new  func() runtime.Object
}{
	{file: "application-multisource.yaml", new: func() runtime.Object { return &Application{} }},
	{file: "appproject-payments.yaml", new: func() runtime.Object { return &AppProject{} }},
}

// decodeStrict decodes a testdata file into a fresh object, failing on any
// field the types do not model.
func decodeStrict(t *testing.T, file string, newObj func() runtime.Object) runtime.Object {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	obj := newObj()
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		t.Fatalf("decode %s: %v", file, err)
	}
	return obj
}

// genericJSON returns the file as decoded JSON (maps, slices, float64).
func genericJSON(t *testing.T, file string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("decode %s: %v", file, err)
	}
	return m
}

func toGeneric(t *testing.T, v any) map[string]any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return m
}

func TestRoundTrip(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.file, func(t *testing.T) {
			obj := decodeStrict(t, f.file, f.new)
			want := genericJSON(t, f.file)
			got := toGeneric(t, obj)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("JSON after decode and encode (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeModelledFields(t *testing.T) {
	app := decodeStrict(t, "application-multisource.yaml", func() runtime.Object { return &Application{} }).(*Application)
	proj := decodeStrict(t, "appproject-payments.yaml", func() runtime.Object { return &AppProject{} }).(*AppProject)

	type summary struct {
		Sources        int
		ValuesObject   map[string]any
		ReplicaCounts  []string
		PatchTarget    string
		AutomatedOn    bool
		BackoffFactor  int64
		HistoryLimit   int64
		LastHistoryID  int64
		OperationPhase OperationPhase
		HookResult     HookType
		SyncStatus     SyncStatusCode
		PruneResource  string
		StartedAt      string
		WhitelistName  string
		OrphanWarn     bool
		TokenIDs       []string
	}
	var values map[string]any
	if err := json.Unmarshal(app.Spec.Sources[0].Helm.ValuesObject.Raw, &values); err != nil {
		t.Fatalf("valuesObject: %v", err)
	}
	k := app.Spec.Sources[2].Kustomize
	got := summary{
		Sources:        len(app.Sources()),
		ValuesObject:   map[string]any{"replicaCount": values["replicaCount"], "podAnnotations": values["podAnnotations"]},
		ReplicaCounts:  []string{k.Replicas[0].Count.String(), k.Replicas[1].Count.String()},
		PatchTarget:    k.Patches[0].Target.Kind + "/" + k.Patches[0].Target.Name,
		AutomatedOn:    app.Spec.SyncPolicy.Automated.IsEnabled(),
		BackoffFactor:  *app.Spec.SyncPolicy.Retry.Backoff.Factor,
		HistoryLimit:   *app.Spec.RevisionHistoryLimit,
		LastHistoryID:  app.Status.History[len(app.Status.History)-1].ID,
		OperationPhase: app.Status.OperationState.Phase,
		HookResult:     app.Status.OperationState.SyncResult.Resources[0].HookType,
		SyncStatus:     app.Status.Sync.Status,
		PruneResource:  app.Status.Resources[3].Name,
		StartedAt:      app.Status.OperationState.StartedAt.UTC().Format("2006-01-02T15:04:05Z"),
		WhitelistName:  proj.Spec.ClusterResourceWhitelist[1].Name,
		OrphanWarn:     *proj.Spec.OrphanedResources.Warn,
		TokenIDs:       []string{proj.Spec.Roles[0].JWTTokens[0].ID, proj.Status.JWTTokensByRole["deployer"].Items[0].ID},
	}
	want := summary{
		Sources:        4,
		ValuesObject:   map[string]any{"replicaCount": float64(3), "podAnnotations": nil},
		ReplicaCounts:  []string{"3", "2"},
		PatchTarget:    "Deployment/api",
		AutomatedOn:    true,
		BackoffFactor:  2,
		HistoryLimit:   5,
		LastHistoryID:  12,
		OperationPhase: OperationSucceeded,
		HookResult:     HookTypePreSync,
		SyncStatus:     SyncStatusCodeOutOfSync,
		PruneResource:  "old-config",
		StartedAt:      "2025-03-04T09:58:11Z",
		WhitelistName:  "payments-*",
		OrphanWarn:     false,
		TokenIDs:       []string{"7a1f0c2e-ci", "7a1f0c2e-ci"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded fields (-want +got):\n%s", diff)
	}
}

func TestEncodeOmitsEmpty(t *testing.T) {
	tests := []struct {
		name string
		obj  any
		want string
	}{
		{
			name: "application without status or operation",
			obj: &Application{
				Spec: ApplicationSpec{
					Project:     "default",
					Destination: ApplicationDestination{Name: "in-cluster", Namespace: "demo"},
					Source:      &ApplicationSource{RepoURL: "https://git.example.com/demo.git", Path: "deploy"},
				},
			},
			want: `{"metadata":{},"spec":{"source":{"repoURL":"https://git.example.com/demo.git","path":"deploy"},"destination":{"namespace":"demo","name":"in-cluster"},"project":"default"}}`,
		},
		{
			name: "sync status without comparedTo",
			obj:  &ApplicationStatus{Sync: SyncStatus{Status: SyncStatusCodeSynced}, Health: HealthStatus{Status: HealthStatusHealthy}},
			want: `{"sync":{"status":"Synced"},"health":{"status":"Healthy"}}`,
		},
		{
			name: "history entry without source or initiator",
			obj:  &RevisionHistory{ID: 1, Revision: "abc"},
			want: `{"id":1,"revision":"abc","deployedAt":null}`,
		},
		{
			name: "appproject without status",
			obj:  &AppProject{Spec: AppProjectSpec{SourceRepos: []string{"*"}}},
			want: `{"metadata":{},"spec":{"sourceRepos":["*"]}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
		})
	}
}

// scribbler overwrites every exported leaf it can reach: strings, numbers,
// bools, bytes, map values and slice elements, through pointers.
type scribbler struct{ maps, slices, pointers, raws int }

func (s *scribbler) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			s.pointers++
			s.walk(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[runtime.RawExtension]() {
			s.raws++
		}
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				s.walk(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Len() > 0 {
			s.slices++
		}
		for i := range v.Len() {
			s.walk(v.Index(i))
		}
	case reflect.Map:
		if v.Len() > 0 {
			s.maps++
		}
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			s.walk(e)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		v.SetString(v.String() + "~")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint8:
		v.SetUint(v.Uint() ^ 0xff)
	}
}

func TestDeepCopyIsDeep(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.file, func(t *testing.T) {
			orig := decodeStrict(t, f.file, f.new)
			cp := orig.DeepCopyObject()
			if diff := cmp.Diff(orig, cp); diff != "" {
				t.Fatalf("copy differs from original (-orig +copy):\n%s", diff)
			}
			var s scribbler
			s.walk(reflect.ValueOf(cp))
			if s.maps == 0 || s.slices == 0 || s.pointers < 2 {
				t.Fatalf("scribbler reached too little: %+v", s)
			}
			if diff := cmp.Diff(decodeStrict(t, f.file, f.new), orig); diff != "" {
				t.Errorf("changing the copy changed the original (-want +got):\n%s", diff)
			}
			if cmp.Equal(orig, cp) {
				t.Errorf("scribbling did not change the copy")
			}
		})
	}
}

func TestSources(t *testing.T) {
	single := ApplicationSource{RepoURL: "https://git.example.com/a.git", Path: "a"}
	multi := []ApplicationSource{
		{RepoURL: "https://git.example.com/b.git", Path: "b", Helm: &ApplicationSourceHelm{ValueFiles: []string{"v.yaml"}}},
		{RepoURL: "https://git.example.com/c.git", Ref: "values"},
	}
	tests := []struct {
		name string
		app  *Application
		want []ApplicationSource
	}{
		{name: "nil application", app: nil, want: nil},
		{name: "no source", app: &Application{}, want: nil},
		{name: "source", app: &Application{Spec: ApplicationSpec{Source: &single}}, want: []ApplicationSource{single}},
		{name: "sources", app: &Application{Spec: ApplicationSpec{Sources: multi}}, want: multi},
		{
			name: "sources win over source",
			app:  &Application{Spec: ApplicationSpec{Source: &single, Sources: multi}},
			want: multi,
		},
		{
			name: "empty sources fall back to source",
			app:  &Application{Spec: ApplicationSpec{Source: &single, Sources: []ApplicationSource{}}},
			want: []ApplicationSource{single},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.app.Sources()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("Sources() (-want +got):\n%s", diff)
			}
			if tt.app == nil {
				return
			}
			before := tt.app.DeepCopy()
			for i := range got {
				got[i].RepoURL = "changed"
				if got[i].Helm != nil {
					got[i].Helm.ValueFiles[0] = "changed"
				}
			}
			if diff := cmp.Diff(before, tt.app); diff != "" {
				t.Errorf("changing the result changed the Application (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncPolicyAutomatedIsEnabled(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name string
		a    *SyncPolicyAutomated
		want bool
	}{
		{name: "no automated", a: nil, want: false},
		{name: "enabled unset", a: &SyncPolicyAutomated{Prune: true}, want: true},
		{name: "enabled true", a: &SyncPolicyAutomated{Enabled: &yes}, want: true},
		{name: "enabled false", a: &SyncPolicyAutomated{Enabled: &no, SelfHeal: true}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.IsEnabled(); got != tt.want {
				t.Errorf("IsEnabled() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOperationPhase(t *testing.T) {
	tests := []struct {
		phase                 OperationPhase
		completed, successful bool
	}{
		{phase: OperationRunning},
		{phase: OperationTerminating},
		{phase: OperationFailed, completed: true},
		{phase: OperationError, completed: true},
		{phase: OperationSucceeded, completed: true, successful: true},
		{phase: ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.phase), func(t *testing.T) {
			got := [2]bool{tt.phase.Completed(), tt.phase.Successful()}
			if want := [2]bool{tt.completed, tt.successful}; got != want {
				t.Errorf("[Completed, Successful] = %v, want %v", got, want)
			}
		})
	}
}

func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	t.Run("kinds", func(t *testing.T) {
		var got []string
		for _, obj := range []runtime.Object{&Application{}, &ApplicationList{}, &AppProject{}, &AppProjectList{}} {
			gvks, _, err := s.ObjectKinds(obj)
			if err != nil {
				t.Fatal(err)
			}
			for _, gvk := range gvks {
				got = append(got, gvk.String())
			}
		}
		want := []string{
			"argoproj.io/v1alpha1, Kind=Application",
			"argoproj.io/v1alpha1, Kind=ApplicationList",
			"argoproj.io/v1alpha1, Kind=AppProject",
			"argoproj.io/v1alpha1, Kind=AppProjectList",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("registered kinds (-want +got):\n%s", diff)
		}
	})
	t.Run("decode by kind", func(t *testing.T) {
		decoder := serializer.NewCodecFactory(s).UniversalDeserializer()
		for _, f := range fixtures {
			data, err := os.ReadFile(filepath.Join("testdata", f.file))
			if err != nil {
				t.Fatal(err)
			}
			got, gvk, err := decoder.Decode(data, nil, nil)
			if err != nil {
				t.Fatalf("decode %s: %v", f.file, err)
			}
			want := decodeStrict(t, f.file, f.new)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s decoded as %v (-want +got):\n%s", f.file, gvk, diff)
			}
		}
	})
}

func TestInstanceName(t *testing.T) {
	tests := []struct{ name, ns, cp, want string }{
		{"app", "argocd", "argocd", "app"},
		{"app", "", "argocd", "app"},
		{"app", "team", "argocd", "team_app"},
	}
	for _, tt := range tests {
		a := &Application{}
		a.Name, a.Namespace = tt.name, tt.ns
		if got := a.InstanceName(tt.cp); got != tt.want {
			t.Errorf("InstanceName of %s/%s with control plane %q = %q, want %q", tt.ns, tt.name, tt.cp, got, tt.want)
		}
	}
}
