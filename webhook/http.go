package webhook

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/go-logr/logr"
	"k8s.io/utils/ptr"
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

// NewHTTPHandler serves d at one path of a webhook server, through
// controller-runtime's admission.Webhook (body size limit, content type
// check, v1 decoding, panic recovery) logging to log with the request's
// kind, namespace, name, operation, user and uid (logr.Discard() silences
// it). It is the only admission handler of the package.
//
// admission.Webhook always answers HTTP 200, and the API server reads an
// AdmissionReview with allowed=false as a rejection, whatever its status
// code: failurePolicy applies only when the call itself fails. So when d
// returns an error, this handler answers HTTP 500 with the error as plain
// text instead of the AdmissionReview, and the API server applies the
// webhook's failurePolicy (Fail: the request is rejected with "failed
// calling webhook"; Ignore: it is admitted).
func NewHTTPHandler(d Decider, log logr.Logger) http.Handler {
	if log.GetSink() == nil {
		// logr.Discard(): StandaloneWebhook ignores a logger without a
		// sink and would fall back to controller-runtime's global one.
		log = logr.New(ctrllog.NullLogSink{})
	}
	return &httpHandler{decider: d, log: log}
}

// httpHandler is NewHTTPHandler's http.Handler.
type httpHandler struct {
	decider Decider
	log     logr.Logger
}

// ServeHTTP implements http.Handler. Each request gets its own
// admission.Webhook, whose handler keeps the Decider's error for this
// request; the webhook writes its AdmissionReview into a buffer, which is
// sent unless the Decider failed.
func (s *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var failure error
	hook := &admission.Webhook{
		Handler: admission.HandlerFunc(func(ctx context.Context, req admission.Request) (resp admission.Response) {
			// A panic is a failure of the call too: recovered here, it
			// gets the HTTP 500 (and the failurePolicy) an error gets,
			// rather than a denying review.
			defer func() {
				if p := recover(); p != nil {
					s.log.Error(fmt.Errorf("%v", p), "Panic deciding an admission request", "uid", req.UID, "stack", string(debug.Stack()))
					failure = fmt.Errorf("panic deciding the request: %v", p)
					resp = admission.Errored(http.StatusInternalServerError, failure)
				}
			}()
			resp, err := s.decider.Decide(ctx, req)
			if err != nil {
				failure = err
				return admission.Errored(http.StatusInternalServerError, err)
			}
			return resp
		}),
		RecoverPanic:   ptr.To(true),
		LogConstructor: logConstructor,
	}
	// Without a metrics path StandaloneWebhook only sets the logger; the
	// webhook server instruments the path itself. It cannot fail then.
	_, _ = admission.StandaloneWebhook(hook, admission.StandaloneOptions{Logger: s.log})
	rv := &reviewBuffer{header: http.Header{}, code: http.StatusOK}
	hook.ServeHTTP(rv, r)

	hdr := w.Header()
	if failure != nil {
		hdr.Set("Content-Type", "text/plain; charset=utf-8")
		hdr.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("tollgate: " + failure.Error() + "\n"))
		return
	}
	for k, v := range rv.header {
		hdr[k] = v
	}
	if hdr.Get("Content-Type") == "" {
		hdr.Set("Content-Type", "application/json")
	}
	w.WriteHeader(rv.code)
	_, _ = w.Write(rv.body.Bytes())
}

// reviewBuffer is the http.ResponseWriter admission.Webhook writes its
// AdmissionReview to.
type reviewBuffer struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

// Header implements http.ResponseWriter.
func (b *reviewBuffer) Header() http.Header { return b.header }

// WriteHeader implements http.ResponseWriter.
func (b *reviewBuffer) WriteHeader(code int) { b.code = code }

// Write implements http.ResponseWriter.
func (b *reviewBuffer) Write(p []byte) (int, error) { return b.body.Write(p) }

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
