package webhook

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
)

// BenchmarkHandle measures one admission request end to end in process:
// AdmissionReview decoding, the decision (cache lookups and evaluation) and
// response encoding, through NewHTTPHandler. Besides ns/op it reports the
// 99th percentile of the per-request latency (target: under 1ms).
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
				h.ServeHTTP(w, r)
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
