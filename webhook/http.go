package webhook

import (
	"context"
	"net/http"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/utils/ptr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// NewHTTPHandler serves h at one path of a webhook server: controller-runtime's
// admission.Webhook (body size limit, content type check, v1 decoding, panic
// recovery) logging to log with the request's kind, namespace, name,
// operation, user and uid (logr.Discard() silences it).
//
// admission.Webhook always answers HTTP 200, and the API server reads an
// AdmissionReview with allowed=false as a rejection, whatever its status
// code: failurePolicy applies only when the call itself fails. So when the
// Handler could not decide (a failed evaluation or cache lookup, see
// Handler.Handle), this handler answers HTTP 500 with the error as plain
// text instead, and the API server applies the webhook's failurePolicy (Fail:
// the request is rejected with "failed calling webhook"; Ignore: it is
// admitted).
func NewHTTPHandler(h admission.Handler, log logr.Logger) http.Handler {
	hook := &admission.Webhook{
		Handler:        h,
		RecoverPanic:   ptr.To(true),
		LogConstructor: logConstructor,
	}
	if log.GetSink() == nil {
		// logr.Discard(): StandaloneWebhook ignores a logger without a
		// sink and would fall back to controller-runtime's global one.
		log = logr.New(ctrllog.NullLogSink{})
	}
	// Without a metrics path StandaloneWebhook only sets the logger; the
	// webhook server instruments the path itself. It cannot fail then.
	_, _ = admission.StandaloneWebhook(hook, admission.StandaloneOptions{Logger: log})
	return &failurePolicyHandler{next: hook}
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

// failureKey is the context key of a request's *failure.
type failureKey struct{}

// failure records that the Handler could not decide a request.
type failure struct {
	mu  sync.Mutex
	err error
}

// markFailed records err on the request's failure, if ctx carries one.
func markFailed(ctx context.Context, err error) {
	if f, ok := ctx.Value(failureKey{}).(*failure); ok {
		f.mu.Lock()
		f.err = err
		f.mu.Unlock()
	}
}

// failurePolicyHandler turns a response the Handler marked as failed into
// HTTP 500.
type failurePolicyHandler struct {
	next http.Handler
}

// ServeHTTP implements http.Handler.
func (f *failurePolicyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fl := &failure{}
	fw := &failureWriter{ResponseWriter: w, failure: fl}
	f.next.ServeHTTP(fw, r.WithContext(context.WithValue(r.Context(), failureKey{}, fl)))
}

// failureWriter writes the response through, unless the request failed by
// the time the status is written: it then writes HTTP 500 with the error as
// plain text and drops the AdmissionReview body.
type failureWriter struct {
	http.ResponseWriter
	failure *failure
	wrote   bool
	failed  bool
}

// WriteHeader implements http.ResponseWriter.
func (w *failureWriter) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	w.failure.mu.Lock()
	err := w.failure.err
	w.failure.mu.Unlock()
	if err == nil || code != http.StatusOK {
		if hdr := w.ResponseWriter.Header(); hdr.Get("Content-Type") == "" {
			hdr.Set("Content-Type", "application/json")
		}
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.failed = true
	hdr := w.ResponseWriter.Header()
	hdr.Set("Content-Type", "text/plain; charset=utf-8")
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.ResponseWriter.WriteHeader(http.StatusInternalServerError)
	_, _ = w.ResponseWriter.Write([]byte("tollgate: " + err.Error() + "\n"))
}

// Write implements http.ResponseWriter.
func (w *failureWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.failed {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}
