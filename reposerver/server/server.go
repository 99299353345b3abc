package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// MaxRequestBytes bounds a request body: sources and their credentials.
const MaxRequestBytes = 4 << 20

// Server is what a repo-server serves: manifests, ApplicationSets,
// commits and sources' details.
type Server interface {
	reposerver.Generator
	reposerver.AppSetGenerator
	reposerver.CommitReader
	reposerver.AppDetailsReader
}

// NewHandler serves g over HTTP: POST reposerver.ManifestsPath takes a reposerver.Request and
// answers a reposerver.Response, POST reposerver.ApplicationSetsPath an reposerver.AppSetRequest and an
// AppSetResponse, POST reposerver.CommitPath a reposerver.CommitRequest and a reposerver.Commit,
// POST reposerver.AppDetailsPath a reposerver.Request and a reposerver.AppDetails;
// each answers an reposerver.Error instead (422 for an invalid request or a passed
// limit, 503 for an unreachable repository, 400 for a body that is not a
// request). GET /healthz answers 200. Every request is
// logged at V(1) with its outcome, never with its credentials.
func NewHandler(g Server, log logr.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("POST "+reposerver.ManifestsPath, func(w http.ResponseWriter, r *http.Request) {
		var req reposerver.Request
		serve(w, r, log, &req, func(ctx context.Context) (any, []any, error) {
			resp, err := g.Generate(ctx, &req)
			if err != nil {
				return nil, []any{"app", req.AppName}, err
			}
			return resp, []any{"app", req.AppName, "rendered", resp.Rendered, "cached", resp.Cached, "unchanged", resp.Unchanged, "objects", len(resp.Objects)}, nil
		})
	})
	mux.HandleFunc("POST "+reposerver.ApplicationSetsPath, func(w http.ResponseWriter, r *http.Request) {
		var req reposerver.AppSetRequest
		serve(w, r, log, &req, func(ctx context.Context) (any, []any, error) {
			resp, err := g.GenerateApplications(ctx, &req)
			if err != nil {
				return nil, []any{"applicationSet", req.ApplicationSet.Name}, err
			}
			return resp, []any{"applicationSet", req.ApplicationSet.Name, "applications", len(resp.Applications)}, nil
		})
	})
	mux.HandleFunc("POST "+reposerver.AppDetailsPath, func(w http.ResponseWriter, r *http.Request) {
		var req reposerver.Request
		serve(w, r, log, &req, func(ctx context.Context) (any, []any, error) {
			d, err := g.AppDetails(ctx, &req)
			if err != nil {
				return nil, []any{"app", req.AppName}, err
			}
			return d, []any{"app", req.AppName, "type", d.Type}, nil
		})
	})
	mux.HandleFunc("POST "+reposerver.CommitPath, func(w http.ResponseWriter, r *http.Request) {
		var req reposerver.CommitRequest
		serve(w, r, log, &req, func(ctx context.Context) (any, []any, error) {
			c, err := g.Commit(ctx, &req)
			if err != nil {
				return nil, []any{"revision", req.Revision}, err
			}
			return c, []any{"revision", req.Revision}, nil
		})
	})
	return mux
}

// serve decodes one request into req and answers it with do, which also
// returns the key/value pairs that describe the request in the log line.
func serve(w http.ResponseWriter, r *http.Request, log logr.Logger, req any, do func(context.Context) (any, []any, error)) {
	start := time.Now()
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err := dec.Decode(req); err != nil {
		writeJSON(w, http.StatusBadRequest, &reposerver.Error{Code: reposerver.CodeInvalid, Message: "decode request: " + err.Error()})
		return
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		writeJSON(w, http.StatusBadRequest, &reposerver.Error{Code: reposerver.CodeInvalid, Message: "decode request: data after the request"})
		return
	}
	resp, kv, err := do(r.Context())
	kv = append(kv, "path", r.URL.Path, "duration", time.Since(start).String())
	if err != nil {
		we := wireError(err)
		status := http.StatusUnprocessableEntity
		if we.Code == reposerver.CodeUnreachable {
			status = http.StatusServiceUnavailable
		}
		log.V(1).Info("reposerver.Request failed", append(kv, "code", we.Code, "error", we.Message)...)
		writeJSON(w, status, we)
		return
	}
	log.V(1).Info("reposerver.Request served", kv...)
	writeJSON(w, http.StatusOK, resp)
}

// ServerTLSConfig is a repo-server's TLS configuration: the serving
// certificate of getCert and, every handshake, a client certificate signed
// by one of clientCAs required of the caller (the controller holds the CA's
// key and issues itself one; see certs.Manager.GetClientCertificate). TLS
// 1.2 at least; HTTP/1.1 only.
func ServerTLSConfig(getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error), clientCAs func() (*x509.CertPool, error)) *tls.Config {
	base := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: getCert, NextProtos: []string{"http/1.1"}}
	cfg := base.Clone()
	cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		pool, err := clientCAs()
		if err != nil {
			return nil, err
		}
		c := base.Clone()
		c.ClientAuth, c.ClientCAs = tls.RequireAndVerifyClientCert, pool
		return c, nil
	}
	return cfg
}

// writeJSON writes v as the JSON body of a response with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
