package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// TestPluginCaller: Argo CD's generator plugin protocol (the path, the
// bearer token, the request body, the answer's parameters), the plugin
// chosen by its ConfigMap, and its errors: a status, an answer that is
// not JSON, a timeout, a ConfigMap the controller did not read.
func TestPluginCaller(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/api/v1/getparams.execute" || r.Method != http.MethodPost:
			http.NotFound(w, r)
		case r.Header.Get("Authorization") != "Bearer s3cret":
			http.Error(w, "no", http.StatusForbidden)
		default:
			_ = json.NewDecoder(r.Body).Decode(&got)
			_, _ = w.Write([]byte(`{"output": {"parameters": [{"cluster": "a", "n": 1}, {"cluster": "b"}]}}`))
		}
	}))
	defer srv.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Second):
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	junk := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>")) }))
	defer junk.Close()
	pc := pluginCaller{
		{ConfigMapName: "ok", BaseURL: srv.URL + "/", Token: "s3cret"},
		{ConfigMapName: "wrong-token", BaseURL: srv.URL, Token: "nope"},
		{ConfigMapName: "slow", BaseURL: slow.URL, RequestTimeout: 100 * time.Millisecond},
		{ConfigMapName: "junk", BaseURL: junk.URL},
	}
	gen := func(cm string) *v1alpha1.PluginGenerator {
		return &v1alpha1.PluginGenerator{ConfigMapRef: v1alpha1.PluginConfigMapRef{Name: cm},
			Input: v1alpha1.PluginInput{Parameters: map[string]apiextensionsv1.JSON{"env": {Raw: []byte(`"prod"`)}}}}
	}
	params, err := pc.Params(t.Context(), "f", "my-set", gen("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]map[string]any{{"cluster": "a", "n": 1.0}, {"cluster": "b"}}, params); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
	want := map[string]any{"applicationSetName": "my-set", "input": map[string]any{"parameters": map[string]any{"env": "prod"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	for cm, want := range map[string]string{
		"wrong-token": "403 Forbidden: no",
		"slow":        "context deadline exceeded",
		"junk":        "decode the answer",
		"unknown":     `f.configMapRef: the plugin of ConfigMap "unknown" was not read by the controller`,
	} {
		if _, err := pc.Params(t.Context(), "f", "my-set", gen(cm)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", cm, err, want)
		}
	}
}
