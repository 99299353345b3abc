package reposerver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/go-logr/logr"
)

// MaxRequestBytes bounds a request body: sources and their credentials.
const MaxRequestBytes = 4 << 20

// Generator answers manifest requests; *Service and *Client implement it.
type Generator interface {
	Generate(ctx context.Context, req *Request) (*Response, error)
}

// NewHandler serves g over HTTP: POST ManifestsPath takes a Request and
// answers a Response (200) or an Error (422 for an invalid request or a
// passed limit, 503 for an unreachable repository, 400 for a body that is
// not a Request). GET /healthz answers 200. Every request is logged at
// V(1) with its outcome, never with its credentials.
func NewHandler(g Generator, log logr.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("POST "+ManifestsPath, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var req Request
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
		if err := dec.Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, &Error{Code: CodeInvalid, Message: "decode request: " + err.Error()})
			return
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			writeJSON(w, http.StatusBadRequest, &Error{Code: CodeInvalid, Message: "decode request: data after the request"})
			return
		}
		resp, err := g.Generate(r.Context(), &req)
		if err != nil {
			we := wireError(err)
			status := http.StatusUnprocessableEntity
			if we.Code == CodeUnreachable {
				status = http.StatusServiceUnavailable
			}
			log.V(1).Info("Generate failed", "app", req.AppName, "code", we.Code, "error", we.Message, "duration", time.Since(start).String())
			writeJSON(w, status, we)
			return
		}
		log.V(1).Info("Generated", "app", req.AppName, "rendered", resp.Rendered, "cached", resp.Cached,
			"unchanged", resp.Unchanged, "objects", len(resp.Objects), "duration", time.Since(start).String())
		writeJSON(w, http.StatusOK, resp)
	})
	return mux
}

// writeJSON writes v as the JSON body of a response with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
