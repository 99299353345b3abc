package webhook

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	sigsjson "sigs.k8s.io/json"
)

// FuzzHandle feeds arbitrary bodies through the whole HTTP path
// (NewHTTPHandler's decoding, then Decide) with the built-in rules and a
// cache holding one project and one Application. Whatever the body, the
// answer must be a well-formed AdmissionReview response (HTTP 200), or the
// plain-text HTTP 500 of a failed evaluation; never a panic. The seed corpus
// is in testdata/fuzz/FuzzHandle.
func FuzzHandle(f *testing.F) {
	f.Add(review("admission.k8s.io/v1", request(admissionv1.Create, deployment("web", "api", "nginx:latest"), nil)))
	f.Add(review("admission.k8s.io/v1", request(admissionv1.Update,
		with(deployment("team-c", "api", "nginx:1"), map[string]any{TrackingIDAnnotation: "web:apps/Deployment:team-c/api"}, "metadata", "annotations"),
		deployment("team-c", "api", "nginx:1"))))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"","version":"v1","kind":"Secret"},"operation":"CREATE","namespace":"web","object":{"kind":"Secret","metadata":"x","data":[1]}}}`))

	h := NewHTTPHandler(newHandler(f, DefaultConfig(), appProject("team", "team-a"), application("web", "team", "team-a")), logr.Discard())
	f.Fuzz(func(t *testing.T, body []byte) {
		w := serve(t, h, "application/json", bytes.NewReader(body))
		switch w.Code {
		case http.StatusOK:
			var got reviewResponse
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatalf("response is not JSON: %v\n%s", err, w.Body.String())
			}
			if got.Response == nil || got.Response.Status == nil || got.Response.Status.Code == 0 {
				t.Fatalf("response lacks response.status.code: %s", w.Body.String())
			}
			if got.Response.Allowed != (got.Response.Status.Code == http.StatusOK) {
				t.Fatalf("allowed %v with status code %d: %s", got.Response.Allowed, got.Response.Status.Code, w.Body.String())
			}
		case http.StatusInternalServerError:
			if !bytes.HasPrefix(w.Body.Bytes(), []byte("tollgate: ")) {
				t.Fatalf("HTTP 500 body %q does not start with tollgate: ", w.Body.String())
			}
		default:
			t.Fatalf("HTTP status %d: %s", w.Code, w.Body.String())
		}
	})
}

// FuzzDecodeReview checks decodeReview against the reference decoding it
// replaces (the API machinery's decoder over the whole review, then
// encoding/json over each object): the same error or none, the same
// request, the same objects as the rules see them.
func FuzzDecodeReview(f *testing.F) {
	f.Add(review("admission.k8s.io/v1", request(admissionv1.Create, deployment("web", "api", "nginx:latest"), nil)))
	f.Add(review("admission.k8s.io/v1", request(admissionv1.Update,
		with(deployment("team-c", "api", "nginx:1"), map[string]any{"replicas": 3.5e300, "tiny": -1e-320, "big": 1.2345678901234567890e19, "n": 7}, "spec"),
		deployment("team-c", "api", "nginx:1"))))
	for _, s := range []string{
		`{"request":{"uid":"u","object":{"a":1},"object":{"b":"\u00e9\n\"x\""},"oldObject":null}}`,
		`{"request":{"uid":"u","object":{"a":1}},"request":{"name":"n"}}`,
		`{"request":{"uid":"u","object":{"a":1}},"request":null}`,
		`{"request":{"object":[1,2],"oldObject":"x"}}`,
		`{"request":{"object":{"n":1e999}}}`,
		`{"request":{"object":{"s":"\ud800"}}}`,
		`{"request":{"object":{"s":"a` + "\t" + `b"}}}`,
		`{"request":{"uid":5,"object":{}}}`,
		`{"Request":{"uid":"u","object":{}}}`,
		`{"request":{"object":{"k":[{"x":true,"y":false,"z":null}]}}}` + "\n",
		"{\"request\":{\"object\":{\"s\":\"\xff\"}}}",
		`[1]`,
		`{"request":{"object":{"n":-0.0e-0}}}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"apps","version":"v1","kind":"Deployment"},` +
			`"resource":{"group":"apps","version":"v1","resource":"deployments"},"requestKind":{"group":"apps","version":"v1","kind":"Deployment"},` +
			`"requestResource":{"group":"apps","version":"v1","resource":"deployments"},"subResource":"","requestSubResource":"","name":"api","namespace":"team-a",` +
			`"operation":"UPDATE","userInfo":{"username":"alice","uid":"1","groups":["system:authenticated"],"extra":{"scopes":["a","b"],"none":[]}},` +
			`"object":{"kind":"Deployment"},"oldObject":{"kind":"Deployment"},"dryRun":false,"options":{"kind":"UpdateOptions","apiVersion":"meta.k8s.io/v1","fieldManager":"m\u00e9"}}}`,
		`{"request":{"uid":"a","kind":{"group":"g"},"kind":{"kind":"K"},"userInfo":{"groups":[]},"userInfo":{"extra":{"x":["1"]}},"userInfo":{"extra":{"y":[]}},"dryRun":true}}`,
		`{"request":{"requestKind":{"kind":"A"},"requestKind":{"group":"B"},"options":[1,{"a":"\/"}],"options":{}},"request":{"name":"n"}}`,
		`{"request":{"uid":"u"},"response":{"uid":"u","allowed":true}}`,
		`{"request":{"userInfo":{"groups":["a",1]}}}`,
		`{"request":{"dryRun":null}}`,
		`{"apiVersion":null,"request":{"uid":"a","uid":null,"kind":null,"requestKind":{"kind":"K"},"requestKind":null,"requestResource":null,"options":null,` +
			`"userInfo":{"groups":["g"],"extra":{"a":["b"]}},"userInfo":{"groups":null,"extra":{"a":null}},"dryRun":true,"dryRun":null,"operation":null}}`,
		`{"request":{"userInfo":{"extra":{"a":["b"]}},"userInfo":{"extra":null},"userInfo":null,"options":{"a":1},"options":null}}`,
		`{"request":{"uid":"a"},"request":null}`,
		`{"request":{"Name":"n","name":"m"}}`,
		`{"request":{"uid":"\u0000","options":"\u0000"}}`,
		`{"request":{"options":{"a":"\u0000\ud800x"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got, want admissionv1.AdmissionReview
		gotErr := decodeReview(body, &got)
		wantErr := sigsjson.UnmarshalCaseSensitivePreserveInts(body, &want)
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("error %v, want %v", gotErr, wantErr)
		}
		if gotErr != nil || want.Request == nil {
			if got.Request != nil && want.Request == nil {
				t.Fatalf("request decoded where the reference has none")
			}
			return
		}
		for _, pair := range [][2]runtime.RawExtension{{got.Request.Object, want.Request.Object}, {got.Request.OldObject, want.Request.OldObject}} {
			g, gErr := decodeObject(pair[0])
			w, wErr := decodeObject(pair[1])
			if (gErr == nil) != (wErr == nil) || gErr != nil && gErr.Error() != wErr.Error() || !reflect.DeepEqual(g, w) {
				t.Fatalf("object %#v (%v), want %#v (%v)", g, gErr, w, wErr)
			}
		}
		got.Request.Object, got.Request.OldObject = runtime.RawExtension{}, runtime.RawExtension{}
		want.Request.Object, want.Request.OldObject = runtime.RawExtension{}, runtime.RawExtension{}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("review %#v, want %#v", got, want)
		}
	})
}
