package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/tollgate-dev/tollgate/policies"
)

// review wraps a request in an AdmissionReview body of apiVersion.
func review(apiVersion string, req admission.Request) []byte {
	return mustJSON(map[string]any{
		"apiVersion": apiVersion,
		"kind":       "AdmissionReview",
		"request":    req.AdmissionRequest,
	})
}

// serve posts body to the handler and returns the recorded response.
func serve(t testing.TB, h http.Handler, contentType string, body io.Reader) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/validate", body)
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// reviewResponse is the part of a returned AdmissionReview the tests read.
type reviewResponse struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Response   *struct {
		UID     string `json:"uid"`
		Allowed bool   `json:"allowed"`
		Status  *struct {
			Code    int32  `json:"code"`
			Message string `json:"message"`
		} `json:"status"`
		Warnings []string `json:"warnings"`
	} `json:"response"`
}

func TestServeHTTP(t *testing.T) {
	h := NewHTTPHandler(newHandler(t, DefaultConfig()), logr.Discard())
	pinned := request(admissionv1.Create, deployment("web", "api", "nginx:1.27.3"), nil)
	latest := request(admissionv1.Create, deployment("web", "api", "nginx:latest"), nil)
	noMeta := request(admissionv1.Create, map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}, nil)
	noMeta.Namespace = "web"
	unknown := request(admissionv1.Create, map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "web"},
	}, nil)

	type want struct {
		apiVersion string
		uid        string
		allowed    bool
		code       int32
		message    string // prefix
	}
	tests := []struct {
		name        string
		contentType string
		body        io.Reader
		want        want
	}{
		{
			name: "allowed", contentType: "application/json",
			body: bytes.NewReader(review("admission.k8s.io/v1", pinned)),
			want: want{apiVersion: "admission.k8s.io/v1", uid: "req-1", allowed: true, code: 200},
		},
		{
			name: "denied", contentType: "application/json",
			body: bytes.NewReader(review("admission.k8s.io/v1", latest)),
			want: want{apiVersion: "admission.k8s.io/v1", uid: "req-1", code: 403, message: "[no-latest-tag] "},
		},
		{
			name: "v1beta1 review answered in v1beta1", contentType: "application/json",
			body: bytes.NewReader(review("admission.k8s.io/v1beta1", latest)),
			want: want{apiVersion: "admission.k8s.io/v1beta1", uid: "req-1", code: 403, message: "[no-latest-tag] "},
		},
		{
			name: "object without metadata", contentType: "application/json",
			body: bytes.NewReader(review("admission.k8s.io/v1", noMeta)),
			want: want{apiVersion: "admission.k8s.io/v1", uid: "req-1", allowed: true, code: 200},
		},
		{
			name: "unknown kind", contentType: "application/json",
			body: bytes.NewReader(review("admission.k8s.io/v1", unknown)),
			want: want{apiVersion: "admission.k8s.io/v1", uid: "req-1", allowed: true, code: 200},
		},
		{
			name: "malformed body", contentType: "application/json",
			body: strings.NewReader(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{`),
			want: want{code: 400, message: "decode the request: unexpected end of JSON input"},
		},
		{
			// Only an AdmissionReview of admission.k8s.io/v1 or v1beta1
			// is read.
			name: "not an admission review", contentType: "application/json",
			body: strings.NewReader(`{"apiVersion":"v1","kind":"Pod"}`),
			want: want{code: 400, message: "decode the request: v1 Pod is not an AdmissionReview of admission.k8s.io/v1 or v1beta1"},
		},
		{
			name: "a review without a request", contentType: "application/json",
			body: strings.NewReader(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`),
			want: want{code: 400, message: "decode the request: the review has no request"},
		},
		{
			name: "empty body", contentType: "application/json",
			body: http.NoBody,
			want: want{code: 400, message: "request body is empty"},
		},
		{
			name: "wrong content type", contentType: "application/yaml",
			body: bytes.NewReader(review("admission.k8s.io/v1", pinned)),
			want: want{code: 400, message: "contentType=application/yaml, expected application/json"},
		},
		{
			name: "oversized body", contentType: "application/json",
			body: io.MultiReader(strings.NewReader(`{"request":{"uid":"`), strings.NewReader(strings.Repeat("x", 8<<20))),
			want: want{code: 413, message: "request entity is too large"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serve(t, h, tt.contentType, tt.body)
			if w.Code != http.StatusOK {
				t.Fatalf("HTTP status = %d, want 200 (body %q)", w.Code, w.Body.String())
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
			var got reviewResponse
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatalf("response is not JSON: %v\n%s", err, w.Body.String())
			}
			if got.Response == nil || got.Response.Status == nil {
				t.Fatalf("response lacks response.status: %s", w.Body.String())
			}
			r := got.Response
			if r.UID != tt.want.uid || r.Allowed != tt.want.allowed || r.Status.Code != tt.want.code ||
				got.APIVersion != tt.want.apiVersion || !strings.HasPrefix(r.Status.Message, tt.want.message) {
				t.Errorf("response = %s\nwant apiVersion %q uid %q allowed %v code %d message prefix %q",
					w.Body.String(), tt.want.apiVersion, tt.want.uid, tt.want.allowed, tt.want.code, tt.want.message)
			}
		})
	}
}

func TestServeHTTPExactJSON(t *testing.T) {
	h := NewHTTPHandler(newHandler(t, DefaultConfig()), logr.Discard())
	tests := []struct {
		name        string
		contentType string
		body        []byte
		want        string
	}{
		{
			name:        "allowed",
			contentType: "application/json",
			body:        review("admission.k8s.io/v1", request(admissionv1.Create, deployment("web", "api", "nginx:1.27.3"), nil)),
			want:        `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"req-1","allowed":true,"status":{"metadata":{},"code":200}}}` + "\n",
		},
		{
			name:        "wrong content type",
			contentType: "text/plain",
			body:        []byte(`{}`),
			want:        `{"response":{"uid":"","allowed":false,"status":{"metadata":{},"message":"contentType=text/plain, expected application/json","code":400}}}` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serve(t, h, tt.contentType, bytes.NewReader(tt.body))
			if diff := cmp.Diff(tt.want, w.Body.String()); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestServeHTTPFailureIsHTTP500(t *testing.T) {
	opts := DefaultOptions()
	opts.Evaluator = evaluatorFunc(func(context.Context, policies.Input) (policies.Decision, error) {
		return policies.Decision{}, errors.New("evaluate policies for Deployment/api: boom")
	})
	opts.Reader = newReader(t)
	hd, err := NewHandler(opts)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHTTPHandler(hd, logr.Discard())
	w := serve(t, h, "application/json",
		bytes.NewReader(review("admission.k8s.io/v1", request(admissionv1.Create, deployment("web", "api", "nginx:1"), nil))))
	if w.Code != http.StatusInternalServerError {
		t.Errorf("HTTP status = %d, want 500", w.Code)
	}
	if got, want := w.Body.String(), "tollgate: evaluate policies for Deployment/api: boom\n"; got != want {
		t.Errorf("body = %q, want %q", got, want)
	}
	if ct := w.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type = %q, want text/plain", ct)
	}

	// The next request on the same handler (exempt: not evaluated) is not
	// affected.
	w = serve(t, h, "application/json",
		bytes.NewReader(review("admission.k8s.io/v1", request(admissionv1.Create, deployment("kube-system", "api", "nginx:1"), nil))))
	if w.Code != http.StatusOK {
		t.Errorf("HTTP status after a failure = %d, want 200", w.Code)
	}
}

// TestNewHTTPHandler: what the API server reads for each answer of a
// Decider. A decided request, allowed, denied or rejected, is an
// AdmissionReview with HTTP 200; an error is HTTP 500 with the error as
// plain text, so that the API server applies the failurePolicy.
func TestNewHTTPHandler(t *testing.T) {
	const denial = `[no-latest-tag] container "app" uses image "nginx:latest"`
	malformed := admission.Errored(http.StatusBadRequest, errors.New("read request object: request carries no object"))
	malformed.Result.Reason = "BadRequest"
	tests := []struct {
		name    string
		decider DeciderFunc
		code    int
		ctype   string
		body    string
	}{
		{
			name: "allowed",
			decider: func(context.Context, admission.Request) (admission.Response, error) {
				return admission.Allowed("").WithWarnings("[pdb-exists] no PodDisruptionBudget"), nil
			},
			code: http.StatusOK, ctype: "application/json",
			body: `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"req-1","allowed":true,"status":{"metadata":{},"code":200},"warnings":["[pdb-exists] no PodDisruptionBudget"]}}` + "\n",
		},
		{
			name: "denied",
			decider: func(context.Context, admission.Request) (admission.Response, error) {
				return admission.Denied(denial), nil
			},
			code: http.StatusOK, ctype: "application/json",
			body: `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"req-1","allowed":false,"status":{"metadata":{},"message":"[no-latest-tag] container \"app\" uses image \"nginx:latest\"","reason":"Forbidden","code":403}}}` + "\n",
		},
		{
			name: "malformed request rejected",
			decider: func(context.Context, admission.Request) (admission.Response, error) {
				return malformed, nil
			},
			code: http.StatusOK, ctype: "application/json",
			body: `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"req-1","allowed":false,"status":{"metadata":{},"message":"read request object: request carries no object","reason":"BadRequest","code":400}}}` + "\n",
		},
		{
			name: "error",
			decider: func(context.Context, admission.Request) (admission.Response, error) {
				return admission.Response{}, errors.New("get AppProject argocd/team from cache: cache not synced")
			},
			code: http.StatusInternalServerError, ctype: "text/plain; charset=utf-8",
			body: "tollgate: get AppProject argocd/team from cache: cache not synced\n",
		},
		{
			name: "panic",
			decider: func(context.Context, admission.Request) (admission.Response, error) {
				var m map[string]int
				m["boom"]++
				return admission.Allowed(""), nil
			},
			code: http.StatusInternalServerError, ctype: "text/plain; charset=utf-8",
			body: "tollgate: panic deciding the request: assignment to entry in nil map\n",
		},
		{
			name: "error beside a response",
			decider: func(context.Context, admission.Request) (admission.Response, error) {
				return admission.Allowed(""), errors.New("boom")
			},
			code: http.StatusInternalServerError, ctype: "text/plain; charset=utf-8",
			body: "tollgate: boom\n",
		},
	}
	body := review("admission.k8s.io/v1", request(admissionv1.Create, deployment("web", "api", "nginx:latest"), nil))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serve(t, NewHTTPHandler(tt.decider, logr.Discard()), "application/json", bytes.NewReader(body))
			if w.Code != tt.code {
				t.Errorf("HTTP status = %d, want %d", w.Code, tt.code)
			}
			if ct := w.Header().Get("Content-Type"); ct != tt.ctype {
				t.Errorf("Content-Type = %q, want %q", ct, tt.ctype)
			}
			if diff := cmp.Diff(tt.body, w.Body.String()); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if tt.code == http.StatusInternalServerError && w.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q, want nosniff", w.Header().Get("X-Content-Type-Options"))
			}
		})
	}
}

// TestNewHTTPHandlerWrapped: a Decider wrapping the Handler (as tollgate
// dev's story and the integration tests' recorder do) keeps the failure
// contract, and audit mode answers a failure with an allowing review.
func TestNewHTTPHandlerWrapped(t *testing.T) {
	failing := evaluatorFunc(func(context.Context, policies.Input) (policies.Decision, error) {
		return policies.Decision{}, errors.New("evaluate policies for Deployment/api: boom")
	})
	tests := []struct {
		name  string
		mode  Mode
		code  int
		body  string
		ctype string
	}{
		{
			name: "enforce", mode: ModeEnforce,
			code: http.StatusInternalServerError, ctype: "text/plain; charset=utf-8",
			body: "tollgate: evaluate policies for Deployment/api: boom\n",
		},
		{
			name: "audit", mode: ModeAudit,
			code: http.StatusOK, ctype: "application/json",
			body: `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"req-1","allowed":true,"status":{"metadata":{},"code":200},"warnings":["tollgate could not judge this request (audit mode allows it): evaluate policies for Deployment/api: boom"]}}` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Config.Mode = tt.mode
			opts.Evaluator = failing
			opts.Reader = newReader(t)
			hd, err := NewHandler(opts)
			if err != nil {
				t.Fatal(err)
			}
			var seen int
			wrapped := DeciderFunc(func(ctx context.Context, req admission.Request) (admission.Response, error) {
				seen++
				return hd.Decide(ctx, req)
			})
			w := serve(t, NewHTTPHandler(wrapped, logr.Discard()), "application/json",
				bytes.NewReader(review("admission.k8s.io/v1", request(admissionv1.Create, deployment("web", "api", "nginx:1"), nil))))
			if seen != 1 {
				t.Errorf("wrapper called %d times, want 1", seen)
			}
			if w.Code != tt.code {
				t.Errorf("HTTP status = %d, want %d", w.Code, tt.code)
			}
			if ct := w.Header().Get("Content-Type"); ct != tt.ctype {
				t.Errorf("Content-Type = %q, want %q", ct, tt.ctype)
			}
			if diff := cmp.Diff(tt.body, w.Body.String()); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNewHTTPHandlerConcurrentFailures: a failure answers its own request
// only, however requests on one handler interleave.
func TestNewHTTPHandlerConcurrentFailures(t *testing.T) {
	opts := DefaultOptions()
	opts.Evaluator = evaluatorFunc(func(_ context.Context, in policies.Input) (policies.Decision, error) {
		name := stringAt(in.Object, "metadata", "name")
		if strings.HasPrefix(name, "fail-") {
			return policies.Decision{}, errors.New("evaluate policies for Deployment/" + name + ": boom")
		}
		return policies.Decision{}, nil
	})
	opts.Reader = newReader(t)
	hd, err := NewHandler(opts)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHTTPHandler(hd, logr.Discard())
	var wg sync.WaitGroup
	for i := range 64 {
		name := fmt.Sprintf("ok-%d", i)
		if i%2 == 1 {
			name = fmt.Sprintf("fail-%d", i)
		}
		body := review("admission.k8s.io/v1", request(admissionv1.Create, deployment("web", name, "nginx:1"), nil))
		wg.Go(func() {
			w := serve(t, h, "application/json", bytes.NewReader(body))
			switch {
			case strings.HasPrefix(name, "fail-"):
				if want := "tollgate: evaluate policies for Deployment/" + name + ": boom\n"; w.Code != http.StatusInternalServerError || w.Body.String() != want {
					t.Errorf("%s: HTTP %d %q, want 500 %q", name, w.Code, w.Body.String(), want)
				}
			case w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"allowed":true`):
				t.Errorf("%s: HTTP %d %q, want 200 allowed", name, w.Code, w.Body.String())
			}
		})
	}
	wg.Wait()
}

// TestHandlerIsNotAnAdmissionHandler: the Handler reaches the API server
// only through NewHTTPHandler, which alone turns its errors into HTTP 500;
// registered directly, it would answer allowed=false instead.
func TestHandlerIsNotAnAdmissionHandler(t *testing.T) {
	var h any = newHandler(t, DefaultConfig())
	if _, ok := h.(admission.Handler); ok {
		t.Error("*Handler implements admission.Handler; serve it through NewHTTPHandler only")
	}
}

// TestServeHTTPOutlivesServerShutdown: the webhook server cancels the
// contexts of the requests in flight as it starts a graceful shutdown (a
// rolling update); a review already received is still decided, not
// answered with an HTTP 500 that failurePolicy Fail turns into a failed
// write.
func TestServeHTTPOutlivesServerShutdown(t *testing.T) {
	h := NewHTTPHandler(newHandler(t, DefaultConfig()), logr.Discard())
	base, shutdown := context.WithCancel(context.Background())
	shutdown()
	r := httptest.NewRequestWithContext(base, http.MethodPost, "/validate",
		bytes.NewReader(review("admission.k8s.io/v1", request(admissionv1.Create, deployment("web", "api", "nginx:latest"), nil))))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("HTTP status = %d (%s), want 200", w.Code, w.Body.String())
	}
	var got reviewResponse
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Response == nil || got.Response.Allowed || got.Response.Status == nil || !strings.HasPrefix(got.Response.Status.Message, "[no-latest-tag] ") {
		t.Errorf("response = %+v, want a denial by no-latest-tag", got.Response)
	}
}
