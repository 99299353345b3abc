// Package chartserver serves Helm charts for tests and the dev stack, as the
// places charts come from in production: a Helm repository (index.yaml and
// chart archives over HTTPS) and an OCI registry (go-containerregistry's
// in-memory registry, charts pushed with Helm's registry client), each
// behind TLS with a self-signed certificate and optional basic auth.
package chartserver

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v3/pkg/registry"
	"oras.land/oras-go/v2/registry/remote/auth"
	"sigs.k8s.io/yaml"
)

// Package returns the chart archive of a chart named name at version, as
// `helm package` writes it: files (by path in the chart) under a top
// directory named after the chart. Chart.yaml is written unless files has
// one.
func Package(name, version string, files map[string]string) ([]byte, error) {
	all := map[string]string{"Chart.yaml": fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\n", name, version)}
	for k, v := range files {
		all[k] = v
	}
	names := make([]string, 0, len(all))
	for k := range all {
		names = append(names, k)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, n := range names {
		body := all[n]
		hd := &tar.Header{Name: path.Join(name, n), Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(hd); err != nil {
			return nil, err
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// startTLS starts an HTTPS test server that does not log the handshakes
// clients refuse (tests check that they do).
func startTLS(h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	return srv
}

// basicAuth wraps h with basic auth when username is set.
func basicAuth(h http.Handler, username, password string) http.Handler {
	if username == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(username)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Repo is a Helm repository over HTTPS.
type Repo struct {
	// URL is the repository's URL.
	URL string
	srv *httptest.Server
	mu  sync.Mutex
	// charts maps "name-version.tgz" to the archive; entries are the
	// index's.
	charts  map[string][]byte
	entries map[string][]map[string]any
	// requests counts the requests the server received.
	requests atomic.Int64
}

// NewRepo starts a Helm repository; with a username, every request needs
// basic auth.
func NewRepo(username, password string) *Repo {
	r := &Repo{charts: map[string][]byte{}, entries: map[string][]map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/index.yaml", r.index)
	mux.HandleFunc("/charts/", func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		data, ok := r.charts[path.Base(req.URL.Path)]
		r.mu.Unlock()
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(data)
	})
	authorized := basicAuth(mux, username, password)
	r.srv = startTLS(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		authorized.ServeHTTP(w, req)
	}))
	r.URL = r.srv.URL
	return r
}

// Handler is the repository's HTTP handler, to serve it another way (over
// plain HTTP, as a developer's local repository may be).
func (r *Repo) Handler() http.Handler { return r.srv.Config.Handler }

// Requests returns how many requests the repository received, whether
// they were authorized or not.
func (r *Repo) Requests() int64 { return r.requests.Load() }

// Add publishes a chart archive under name and version. digest is what the
// index says its digest is: "" is the archive's own.
func (r *Repo) Add(name, version string, archive []byte, digest string) {
	if digest == "" {
		sum := sha256.Sum256(archive)
		digest = hex.EncodeToString(sum[:])
	}
	file := fmt.Sprintf("%s-%s.tgz", name, version)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.charts[file] = archive
	r.entries[name] = append(r.entries[name], map[string]any{
		"apiVersion": "v2", "name": name, "version": version, "digest": digest,
		"urls": []string{"charts/" + file}, "created": time.Unix(0, 0).UTC().Format(time.RFC3339),
	})
}

func (r *Repo) index(w http.ResponseWriter, _ *http.Request) {
	r.mu.Lock()
	data, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "entries": r.entries, "generated": time.Unix(0, 0).UTC().Format(time.RFC3339)})
	r.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(data)
}

// Close stops the server.
func (r *Repo) Close() { r.srv.Close() }

// Registry is an OCI registry over HTTPS.
type Registry struct {
	// Host is host:port; URL is oci://Host.
	Host, URL          string
	srv                *httptest.Server
	username, password string
}

// NewRegistry starts an OCI registry; with a username, every request needs
// basic auth.
func NewRegistry(username, password string) *Registry {
	srv := startTLS(basicAuth(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))), username, password))
	host := strings.TrimPrefix(srv.URL, "https://")
	return &Registry{Host: host, URL: "oci://" + host, srv: srv, username: username, password: password}
}

// Push pushes a chart archive to repository repo (a path under the host,
// such as "charts") with Helm's registry client, tagged with its version.
func (g *Registry) Push(repo, name, version string, archive []byte) error {
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test server's own certificate
	authorizer := auth.Client{Client: hc}
	if g.username != "" {
		authorizer.Credential = auth.StaticCredential(g.Host, auth.Credential{Username: g.username, Password: g.password})
	}
	c, err := registry.NewClient(registry.ClientOptHTTPClient(hc), registry.ClientOptAuthorizer(authorizer), registry.ClientOptCredentialsFile(""))
	if err != nil {
		return err
	}
	_, err = c.Push(archive, fmt.Sprintf("%s/%s/%s:%s", g.Host, repo, name, version))
	return err
}

// Close stops the server.
func (g *Registry) Close() { g.srv.Close() }
