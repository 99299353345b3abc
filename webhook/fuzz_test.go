package webhook

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
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
