package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// appGetCases are the Applications under testdata/app-get: <case>.yaml is
// the object as the API server stores it, <case>.golden its text output.
var appGetCases = []string{"synced-healthy-hook", "refused-policy-violation", "multi-source"}

// readAppGetCase decodes testdata/app-get/<name>.yaml as stored, unknown
// fields included.
func readAppGetCase(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "app-get", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	return obj
}

func TestAppGetText(t *testing.T) {
	for _, name := range appGetCases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printApp(&out, readAppGetCase(t, name), appGetFormatText); err != nil {
				t.Fatal(err)
			}
			// checkGolden's names are relative to testdata/golden.
			checkGolden(t, filepath.Join("..", "app-get", name+".golden"), out.String())
		})
	}
}

// TestAppGetYAMLAndJSONAsStored checks that -o yaml and -o json print the
// object as stored, fields tollgate does not model included, without
// metadata.managedFields.
func TestAppGetYAMLAndJSONAsStored(t *testing.T) {
	for _, name := range appGetCases {
		for _, format := range []string{appGetFormatYAML, appGetFormatJSON} {
			t.Run(name+"/"+format, func(t *testing.T) {
				stored := readAppGetCase(t, name)
				var out bytes.Buffer
				if err := printApp(&out, stored, format); err != nil {
					t.Fatal(err)
				}
				var got map[string]any
				if err := yaml.Unmarshal(out.Bytes(), &got); err != nil {
					t.Fatalf("decode output: %v\n%s", err, out.String())
				}
				if format == appGetFormatJSON && !json.Valid(out.Bytes()) {
					t.Fatalf("output is not JSON:\n%s", out.String())
				}
				want := stored.DeepCopy().Object
				unstructured.RemoveNestedField(want, "metadata", "managedFields")
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("output (-want +got):\n%s", diff)
				}
				if _, found, _ := unstructured.NestedFieldNoCopy(stored.Object, "metadata", "managedFields"); name == "synced-healthy-hook" && !found {
					t.Error("printApp removed managedFields from its argument")
				}
			})
		}
	}
}

// TestAppGetJSONRoundTrip reads each Application through getApp, as the
// command does, and decodes -o json back into the same Application.
func TestAppGetJSONRoundTrip(t *testing.T) {
	for _, name := range appGetCases {
		t.Run(name, func(t *testing.T) {
			var app v1alpha1.Application
			data, err := json.Marshal(readAppGetCase(t, name).Object)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &app); err != nil {
				t.Fatal(err)
			}
			c := fakeAppClient(t, &app)
			key := types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
			var want v1alpha1.Application
			if err := c.Get(t.Context(), key, &want); err != nil {
				t.Fatal(err)
			}
			want.ManagedFields = nil
			want.SetGroupVersionKind(v1alpha1.ApplicationGroupVersionKind)

			obj, err := getApp(t.Context(), c, key)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := printApp(&out, obj, appGetFormatJSON); err != nil {
				t.Fatal(err)
			}
			var got v1alpha1.Application
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("-o json decoded (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGetApp(t *testing.T) {
	billing := &v1alpha1.Application{}
	billing.Name, billing.Namespace = "billing", "argocd"
	tests := []struct {
		name     string
		key      types.NamespacedName
		wantErr  string
		wantCode int
	}{
		{name: "found", key: types.NamespacedName{Namespace: "argocd", Name: "billing"}},
		{name: "missing", key: types.NamespacedName{Namespace: "argocd", Name: "nope"}, wantErr: "application nope not found in namespace argocd", wantCode: exitUsage},
		{name: "other namespace", key: types.NamespacedName{Namespace: "team-web", Name: "billing"}, wantErr: "application billing not found in namespace team-web", wantCode: exitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := getApp(t.Context(), fakeAppClient(t, billing.DeepCopy()), tc.key)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || exitCode(err) != tc.wantCode {
					t.Fatalf("error = %v (exit %d), want %q (exit %d)", err, exitCode(err), tc.wantErr, tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.GetName() != "billing" || got.GetKind() != v1alpha1.ApplicationKind {
				t.Errorf("got %s %s, want Application billing", got.GetKind(), got.GetName())
			}
		})
	}
}

func TestAppGetUsageErrors(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"app", "get"}, "accepts 1 arg(s), received 0"},
		{[]string{"app", "get", "billing", "-o", "wider"}, `unknown output format: wider (valid: wide, text, tree, tree=detailed, yaml, json)`},
		{[]string{"app", "get", "billing", "--kubeconfig", "/nonexistent/kubeconfig"}, "load kubeconfig /nonexistent/kubeconfig"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runCLI(t, nil, tc.args...)
			if r.code != exitUsage || !strings.Contains(r.err, tc.wantErr) {
				t.Errorf("exit %d, error %q; want exit %d and an error containing %q", r.code, r.err, exitUsage, tc.wantErr)
			}
		})
	}
}

// fakeAPIServer serves the discovery of argoproj.io/v1alpha1 and the
// Applications in apps by namespace and name; anything else is the API
// server's NotFound, and in namespace "forbidden" its Forbidden. It returns
// a kubeconfig file for it.
func fakeAPIServer(t *testing.T, apps ...*unstructured.Unstructured) string {
	t.Helper()
	mux := http.NewServeMux()
	writeStatus := func(w http.ResponseWriter, err *apierrors.StatusError) {
		status := err.Status()
		status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(status.Code))
		if err := json.NewEncoder(w).Encode(&status); err != nil {
			t.Error(err)
		}
	}
	writeJSON := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if err := json.NewEncoder(w).Encode(v); err != nil {
			t.Error(err)
		}
	}
	mux.HandleFunc("GET /api", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
	})
	gv := metav1.GroupVersionForDiscovery{GroupVersion: v1alpha1.GroupVersion.String(), Version: v1alpha1.GroupVersion.Version}
	mux.HandleFunc("GET /apis", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, &metav1.APIGroupList{
			TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
			Groups:   []metav1.APIGroup{{Name: v1alpha1.GroupVersion.Group, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}},
		})
	})
	mux.HandleFunc("GET /apis/argoproj.io/v1alpha1", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, &metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: v1alpha1.GroupVersion.String(),
			APIResources: []metav1.APIResource{{Name: "applications", SingularName: "application", Namespaced: true, Kind: v1alpha1.ApplicationKind, Verbs: metav1.Verbs{"get"}}},
		})
	})
	mux.HandleFunc("GET /apis/argoproj.io/v1alpha1/namespaces/{namespace}/applications/{name}", func(w http.ResponseWriter, r *http.Request) {
		gr := schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "applications"}
		if r.PathValue("namespace") == "forbidden" {
			writeStatus(w, apierrors.NewForbidden(gr, r.PathValue("name"), errors.New("RBAC: access denied")))
			return
		}
		for _, a := range apps {
			if a.GetNamespace() == r.PathValue("namespace") && a.GetName() == r.PathValue("name") {
				writeJSON(w, http.StatusOK, a.Object)
				return
			}
		}
		writeStatus(w, apierrors.NewNotFound(gr, r.PathValue("name")))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kc := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: %q}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n", srv.URL)
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAppGetCommand runs `tollgate app get` against an API server: what a
// user types and sees, exit status included.
func TestAppGetCommand(t *testing.T) {
	billing := readAppGetCase(t, "synced-healthy-hook")
	kubeconfig := fakeAPIServer(t, billing)
	golden, err := os.ReadFile(filepath.Join("testdata", "app-get", "synced-healthy-hook.golden"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		wantOut  string
		wantErr  string
		wantCode int
	}{
		{name: "text", args: []string{"billing"}, wantOut: string(golden)},
		{name: "json", args: []string{"billing", "-o", "json", "--namespace", "argocd"}, wantOut: `"name": "billing"`},
		{name: "missing", args: []string{"nope"}, wantErr: "application nope not found in namespace argocd", wantCode: exitUsage},
		{name: "other namespace", args: []string{"billing", "--namespace", "team-web"}, wantErr: "application billing not found in namespace team-web", wantCode: exitUsage},
		// As app sync: an error exitCode does not classify is exit 2.
		{name: "forbidden", args: []string{"billing", "--namespace", "forbidden"}, wantErr: `get application billing: applications.argoproj.io "billing" is forbidden: RBAC: access denied`, wantCode: exitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, nil, append([]string{"app", "get", "--kubeconfig", kubeconfig}, tc.args...)...)
			if r.code != tc.wantCode || r.err != tc.wantErr {
				t.Fatalf("exit %d, error %q; want exit %d, error %q", r.code, r.err, tc.wantCode, tc.wantErr)
			}
			if tc.name == "text" {
				if diff := cmp.Diff(tc.wantOut, r.stdout); diff != "" {
					t.Errorf("stdout (-want +got):\n%s", diff)
				}
			} else if !strings.Contains(r.stdout, tc.wantOut) {
				t.Errorf("stdout = %q, want it to contain %q", r.stdout, tc.wantOut)
			}
		})
	}
}

// TestRefreshApp: --refresh sets Argo CD's refresh annotation and waits
// until the controller removes it; --hard-refresh wins over --refresh.
func TestRefreshApp(t *testing.T) {
	key := types.NamespacedName{Namespace: "argocd", Name: "web"}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}

	t.Run("the controller compares", func(t *testing.T) {
		c := fakeAppClient(t, app.DeepCopy())
		done := make(chan error, 1)
		go func() { done <- refreshApp(t.Context(), c, key, v1alpha1.RefreshTypeHard, time.Minute) }()
		// The controller's part: it sees the annotation and removes it.
		err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			var cur v1alpha1.Application
			if err := c.Get(ctx, key, &cur); err != nil {
				return false, err
			}
			if cur.Annotations[v1alpha1.AnnotationKeyRefresh] != v1alpha1.RefreshTypeHard {
				return false, nil
			}
			patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:null}}}`, v1alpha1.AnnotationKeyRefresh)
			return true, c.Patch(ctx, &cur, client.RawPatch(types.MergePatchType, patch))
		})
		if err != nil {
			t.Fatalf("the hard refresh was not asked for: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("refreshApp: %v", err)
		}
	})
	t.Run("no controller", func(t *testing.T) {
		err := refreshApp(t.Context(), fakeAppClient(t, app.DeepCopy()), key, v1alpha1.RefreshTypeNormal, 300*time.Millisecond)
		if err == nil || !strings.Contains(err.Error(), "the controller did not compare it within 300ms (is tollgate controller running for namespace argocd?)") {
			t.Errorf("refreshApp without a controller: %v", err)
		}
	})
	t.Run("missing application", func(t *testing.T) {
		err := refreshApp(t.Context(), fakeAppClient(t), key, v1alpha1.RefreshTypeNormal, time.Second)
		if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "application web not found in namespace argocd") {
			t.Errorf("refreshApp of a missing application: exit %d, %v", exitCode(err), err)
		}
	})
	t.Run("flags", func(t *testing.T) {
		for args, want := range map[string]string{
			"":                               "",
			"--refresh":                      v1alpha1.RefreshTypeNormal,
			"--hard-refresh":                 v1alpha1.RefreshTypeHard,
			"--refresh --hard-refresh":       v1alpha1.RefreshTypeHard,
			"--hard-refresh --refresh":       v1alpha1.RefreshTypeHard,
			"--refresh --hard-refresh=false": v1alpha1.RefreshTypeNormal,
		} {
			f := pflag.NewFlagSet("get", pflag.ContinueOnError)
			var got string
			addRefreshFlags(f, &got)
			if err := f.Parse(strings.Fields(args)); err != nil {
				t.Fatalf("%s: %v", args, err)
			}
			if got != want {
				t.Errorf("%q: refresh %q, want %q", args, got, want)
			}
		}
	})
}
