package webhook

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	sigsjson "sigs.k8s.io/json"
)

// BenchmarkHandle measures one admission request end to end in process:
// AdmissionReview decoding, the decision (cache lookups and evaluation) and
// response encoding, through NewHTTPHandler, each request on a goroutine
// of its own as the HTTP server runs it. Besides ns/op it reports the 99th
// percentile of the per-request latency (target: under 1ms).
func BenchmarkHandle(b *testing.B) {
	team := appProject("team", "team-a")
	web := application("web", "team", "team-a")
	tracked := with(deployment("team-a", "api", "nginx:1.27.3"),
		map[string]any{TrackingIDAnnotation: "web:apps/Deployment:team-a/api"}, "metadata", "annotations")
	cases := []struct {
		name string
		body []byte
	}{
		{"deployment", review("admission.k8s.io/v1", request(admissionv1.Create, tracked, nil))},
		{"secret", review("admission.k8s.io/v1", request(admissionv1.Create, secret("team-a", "db"), nil))},
		{"application", review("admission.k8s.io/v1", request(admissionv1.Create, application("api", "team", "team-a"), nil))},
	}
	h := NewHTTPHandler(newHandler(b, DefaultConfig(), team, web), logr.Discard())
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			rd := bytes.NewReader(c.body)
			r := httptest.NewRequest(http.MethodPost, "/validate", rd)
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			lat := make([]time.Duration, 0, 1024)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				rd.Reset(c.body)
				w.Body.Reset()
				start := time.Now()
				done := make(chan struct{})
				go func() {
					defer close(done)
					h.ServeHTTP(w, r)
				}()
				<-done
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			if w.Code != http.StatusOK {
				b.Fatalf("HTTP %d: %s", w.Code, w.Body.String())
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

// BenchmarkDecodeReview decodes the review of an UPDATE of a Deployment as
// the API server sends it (stored object and old object, managedFields
// and status included), to the maps the rules read: decodeReview beside
// the reference decoding it replaced (the whole review with the API
// machinery's decoder, then each object again with encoding/json).
func BenchmarkDecodeReview(b *testing.B) {
	stored, err := os.ReadFile("testdata/deployment-stored.json")
	stored = bytes.TrimSpace(stored)
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"5b0c2c1e-1111-4a3b-9c1d-2e2f3a4b5c6d",` +
		`"kind":{"group":"apps","version":"v1","kind":"Deployment"},"resource":{"group":"apps","version":"v1","resource":"deployments"},` +
		`"requestKind":{"group":"apps","version":"v1","kind":"Deployment"},"requestResource":{"group":"apps","version":"v1","resource":"deployments"},` +
		`"name":"api","namespace":"team-a","operation":"UPDATE","userInfo":{"username":"system:serviceaccount:tollgate-system:tollgate-controller",` +
		`"uid":"0b7f","groups":["system:serviceaccounts","system:serviceaccounts:tollgate-system","system:authenticated"]},` +
		`"object":` + string(stored) + `,"oldObject":` + string(stored) + `,"dryRun":false,"options":{"kind":"UpdateOptions","apiVersion":"meta.k8s.io/v1","fieldManager":"tollgate-controller"}}}`)
	decoders := []struct {
		name   string
		decode func([]byte, *admissionv1.AdmissionReview) error
	}{
		{"reference", func(body []byte, in *admissionv1.AdmissionReview) error {
			return sigsjson.UnmarshalCaseSensitivePreserveInts(body, in)
		}},
		{"decodeReview", decodeReview},
	}
	for _, d := range decoders {
		b.Run(d.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var in admissionv1.AdmissionReview
				if err := d.decode(body, &in); err != nil {
					b.Fatal(err)
				}
				if _, err := decodeObject(in.Request.Object); err != nil {
					b.Fatal(err)
				}
				if _, err := decodeObject(in.Request.OldObject); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkServeGoroutine measures an Application's review as the HTTP
// server runs it, on a goroutine of its own: straight on that fresh
// goroutine (its stack grows as OPA recurses) and through NewHTTPHandler,
// which hands it to a warm goroutine (warm.go).
func BenchmarkServeGoroutine(b *testing.B) {
	team := appProject("team", "team-a")
	web := application("web", "team", "team-a")
	body := review("admission.k8s.io/v1", request(admissionv1.Create, application("api", "team", "team-a"), nil))
	h := NewHTTPHandler(newHandler(b, DefaultConfig(), team, web), logr.Discard())
	for _, c := range []struct {
		name  string
		serve func(http.ResponseWriter, *http.Request)
	}{
		{"fresh", h.(*httpHandler).serve},
		{"warm", h.ServeHTTP},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				done := make(chan struct{})
				go func() {
					defer close(done)
					c.serve(w, r)
				}()
				<-done
				if w.Code != http.StatusOK {
					b.Fatalf("HTTP %d: %s", w.Code, w.Body.String())
				}
			}
		})
	}
}
