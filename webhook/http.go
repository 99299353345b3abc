package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Decider decides admission requests; *Handler implements it and
// NewHTTPHandler serves it. An error means the request could not be
// decided (a failed evaluation or cache lookup): NewHTTPHandler answers it
// with HTTP 500. A request that is decided, whether allowed, denied or
// rejected as malformed, is a Response and no error.
type Decider interface {
	Decide(ctx context.Context, req admission.Request) (admission.Response, error)
}

// DeciderFunc adapts a function to Decider, e.g. to wrap a Handler.
type DeciderFunc func(ctx context.Context, req admission.Request) (admission.Response, error)

// Decide implements Decider.
func (f DeciderFunc) Decide(ctx context.Context, req admission.Request) (admission.Response, error) {
	return f(ctx, req)
}

// NewHTTPHandler serves d at one path of a webhook server, as
// controller-runtime's admission.Webhook does (body size limit, content
// type check, v1 and v1beta1 reviews, panic recovery, an answer of the
// review's version), logging to log with the request's kind, namespace,
// name, operation, user and uid (logr.Discard() silences it). It decodes
// the review in one pass (admission.Webhook's codec reads it twice: once
// for its kind, once for the review). It is the only admission handler of
// the package.
//
// The API server reads an AdmissionReview with allowed=false as a
// rejection, whatever its status code: failurePolicy applies only when the
// call itself fails. So a malformed request is answered HTTP 200 with an
// errored review, as admission.Webhook answers it, but when d returns an
// error (or panics), this handler answers HTTP 500 with the error as plain
// text, and the API server applies the webhook's failurePolicy (Fail: the
// request is rejected with "failed calling webhook"; Ignore: it is
// admitted).
func NewHTTPHandler(d Decider, log logr.Logger) http.Handler {
	if log.GetSink() == nil {
		log = logr.New(ctrllog.NullLogSink{})
	}
	return &httpHandler{decider: d, log: log}
}

// httpHandler is NewHTTPHandler's http.Handler.
type httpHandler struct {
	decider Decider
	log     logr.Logger
}

// maxReviewBytes bounds a review's body, as admission.Webhook does.
const maxReviewBytes = 7 << 20

// ServeHTTP implements http.Handler. The review runs on a warm goroutine
// (warm.go).
func (s *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	runWarm(func() { s.serve(w, r) })
}

// serve reads, decides and answers one review.
func (s *httpHandler) serve(w http.ResponseWriter, r *http.Request) {
	review, code, err := readReview(r)
	if err != nil {
		// Without apiVersion and kind, as admission.Webhook answers it.
		s.log.Error(err, "Bad admission request")
		writeReview(w, s.log, metav1.TypeMeta{}, admission.Errored(int32(code), err).AdmissionResponse)
		return
	}
	req := admission.Request{AdmissionRequest: *review.Request}
	log := logConstructor(s.log, &req)
	ctx, cancel := reviewContext(r)
	defer cancel()
	resp, err := s.decide(logr.NewContext(ctx, log), req)
	if err != nil {
		hdr := w.Header()
		hdr.Set("Content-Type", "text/plain; charset=utf-8")
		hdr.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("tollgate: " + err.Error() + "\n"))
		return
	}
	if err := resp.Complete(req); err != nil {
		log.Error(err, "Unable to encode the response")
		resp = admission.Errored(http.StatusInternalServerError, err)
		resp.UID = req.UID
	}
	writeReview(w, log, review.TypeMeta, resp.AdmissionResponse)
}

// maxReviewTime bounds the work on one review: the longest timeoutSeconds
// a webhook may have. The evaluator's own timeout is shorter.
const maxReviewTime = 30 * time.Second

// reviewContext is the context a review is decided under: r's values, not
// its cancellation. The webhook server cancels every request's context as
// it starts to shut down (controller-runtime's server derives them from
// the manager's), when the graceful shutdown is meant to let the reviews
// in flight finish: under r's context they would fail ("policy evaluation
// stopped: context canceled") and, with failurePolicy Fail, so would the
// writes they judge, at every rolling update of the webhook. A client
// that goes away costs at most the evaluator's timeout.
func reviewContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(r.Context()), maxReviewTime)
}

// decide calls the Decider, turning a panic into an error: it gets the
// HTTP 500 (and the failurePolicy) an error gets, rather than a denying
// review.
func (s *httpHandler) decide(ctx context.Context, req admission.Request) (resp admission.Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error(fmt.Errorf("%v", p), "Panic deciding an admission request", "uid", req.UID, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic deciding the request: %v", p)
		}
	}()
	return s.decider.Decide(ctx, req)
}

// readReview reads the AdmissionReview of r, v1 or v1beta1 (the same
// fields), or returns the HTTP status of what is wrong with it. The review
// keeps its apiVersion and kind for the answer; without them it is v1.
func readReview(r *http.Request) (admissionv1.AdmissionReview, int, error) {
	var review admissionv1.AdmissionReview
	if r.Body == nil || r.Body == http.NoBody {
		return review, http.StatusBadRequest, errors.New("request body is empty")
	}
	defer r.Body.Close()
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReviewBytes+1))
	switch {
	case err != nil:
		return review, http.StatusBadRequest, fmt.Errorf("read the request body: %w", err)
	case len(body) > maxReviewBytes:
		return review, http.StatusRequestEntityTooLarge, fmt.Errorf("request entity is too large; limit is %d bytes", maxReviewBytes)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		return review, http.StatusBadRequest, fmt.Errorf("contentType=%s, expected application/json", ct)
	}
	var in admissionv1.AdmissionReview
	if err := decodeReview(body, &in); err != nil {
		return review, http.StatusBadRequest, fmt.Errorf("decode the request: %w", err)
	}
	switch {
	case in.APIVersion == "" && in.Kind == "":
		review.TypeMeta = metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: reviewKind}
	case in.Kind != reviewKind || (in.APIVersion != admissionv1.SchemeGroupVersion.String() && in.APIVersion != admissionv1beta1.SchemeGroupVersion.String()):
		return review, http.StatusBadRequest, fmt.Errorf("decode the request: %s %s is not an AdmissionReview of admission.k8s.io/v1 or v1beta1", in.APIVersion, in.Kind)
	default:
		review.TypeMeta = in.TypeMeta
	}
	if in.Request == nil {
		return review, http.StatusBadRequest, errors.New("decode the request: the review has no request")
	}
	review.Request = in.Request
	return review, 0, nil
}

// reviewKind is the kind of an AdmissionReview.
const reviewKind = "AdmissionReview"

// writeReview writes resp as an AdmissionReview of type tm.
func writeReview(w http.ResponseWriter, log logr.Logger, tm metav1.TypeMeta, resp admissionv1.AdmissionResponse) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(admissionv1.AdmissionReview{TypeMeta: tm, Response: &resp}); err != nil {
		log.Error(err, "Unable to write the response")
	}
}

// logConstructor adds the request's identity to the webhook's logger; the
// Handler adds the decision.
func logConstructor(base logr.Logger, req *admission.Request) logr.Logger {
	if req == nil {
		return base
	}
	return base.WithValues(
		"kind", kindOf(*req),
		"namespace", req.Namespace,
		"name", req.Name,
		"operation", req.Operation,
		"user", req.UserInfo.Username,
		"uid", req.UID,
	)
}
