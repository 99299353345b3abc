package reposerver

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of ClientOptions.
const (
	// DefaultMaxResponseBytes bounds a response: the objects of one
	// Application.
	DefaultMaxResponseBytes = 512 << 20
	// DefaultResolveInterval is how long the addresses a host name
	// resolved to are used before it is resolved again.
	DefaultResolveInterval = 30 * time.Second
	// DefaultTimeout is how long a request may wait for its answer: above
	// a fetch's and a render's own limits (5 min and 90 s by default), so
	// that those name themselves first.
	DefaultTimeout = 10 * time.Minute
)

// ClientOptions configure a Client.
type ClientOptions struct {
	// Addresses are the repo-servers, host:port each. A host name that
	// resolves to several addresses (a headless Service) counts once per
	// address.
	Addresses []string
	// RootCAs returns the CAs a repo-server's certificate must chain to;
	// it is called for every new connection, so a rotated CA is picked up.
	RootCAs func() (*x509.CertPool, error)
	// Certificate is the client certificate presented to repo-servers,
	// which require one (ServerTLSConfig).
	Certificate func(*tls.CertificateRequestInfo) (*tls.Certificate, error)
	// MaxResponseBytes bounds a response body; default
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// ResolveInterval is how long resolved addresses are kept; default
	// DefaultResolveInterval.
	ResolveInterval time.Duration
	// Timeout is the deadline of one request, retries on other
	// repo-servers included; default DefaultTimeout. A request past it
	// fails as if no repo-server answered, and is retried as such.
	Timeout time.Duration
	// Resolver resolves host names; default net.DefaultResolver.
	Resolver interface {
		LookupHost(ctx context.Context, host string) ([]string, error)
	}
}

// Client calls repo-servers over HTTPS. Requests are spread over every
// address round-robin; a request whose repo-server cannot be reached, or
// fails without answering, is tried on the next one. Answers (an Error
// included) are final: they do not depend on the replica.
type Client struct {
	opts  ClientOptions
	next  atomic.Uint64
	mu    sync.Mutex
	hosts map[string]*host
}

// host is one entry of Addresses with what it resolved to.
type host struct {
	name, port string
	transport  *http.Transport
	endpoints  []string
	resolvedAt time.Time
}

// NewClient returns a Client for opts.
func NewClient(opts ClientOptions) (*Client, error) {
	if len(opts.Addresses) == 0 {
		return nil, errors.New("new repo-server client: no address")
	}
	if opts.RootCAs == nil {
		return nil, errors.New("new repo-server client: no root CAs")
	}
	if opts.Certificate == nil {
		return nil, errors.New("new repo-server client: no client certificate")
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if opts.ResolveInterval <= 0 {
		opts.ResolveInterval = DefaultResolveInterval
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	c := &Client{opts: opts, hosts: map[string]*host{}}
	for _, a := range opts.Addresses {
		name, port, err := net.SplitHostPort(a)
		if err != nil || name == "" || port == "" {
			return nil, fmt.Errorf("new repo-server client: address %q: want host:port", a)
		}
		c.hosts[a] = &host{name: name, port: port, transport: c.transport(name)}
	}
	return c, nil
}

// transport returns an HTTPS transport that verifies a repo-server's
// certificate for serverName against RootCAs, whatever address it dials.
func (c *Client) transport(serverName string) *http.Transport {
	verify := func(cs tls.ConnectionState) error {
		roots, err := c.opts.RootCAs()
		if err != nil {
			return fmt.Errorf("repo-server CA: %w", err)
		}
		if len(cs.PeerCertificates) == 0 {
			return errors.New("repo-server sent no certificate")
		}
		inter := x509.NewCertPool()
		for _, ic := range cs.PeerCertificates[1:] {
			inter.AddCert(ic)
		}
		_, err = cs.PeerCertificates[0].Verify(x509.VerifyOptions{DNSName: serverName, Roots: roots, Intermediates: inter})
		return err
	}
	return &http.Transport{
		TLSClientConfig: &tls.Config{
			MinVersion: tls.VersionTLS12,
			ServerName: serverName,
			// Verification is VerifyConnection's, with the CAs of the
			// moment rather than a pool fixed at start.
			InsecureSkipVerify:   true, //nolint:gosec // verified in VerifyConnection
			VerifyConnection:     verify,
			GetClientCertificate: c.opts.Certificate,
		},
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0, // a render takes as long as its limit allows
	}
}

// endpoint is one repo-server to try.
type endpoint struct {
	url       string
	transport *http.Transport
}

// endpoints resolves every address (at most every ResolveInterval) and
// lists the repo-servers in a stable order.
func (c *Client) endpoints(ctx context.Context) ([]endpoint, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []endpoint
	var errs []error
	for _, a := range c.opts.Addresses {
		h := c.hosts[a]
		if h.endpoints == nil || time.Since(h.resolvedAt) > c.opts.ResolveInterval {
			ips, err := c.resolve(ctx, h.name)
			if err != nil && h.endpoints == nil {
				errs = append(errs, err)
				continue
			}
			if err == nil {
				h.endpoints, h.resolvedAt = ips, time.Now()
			}
		}
		for _, ip := range h.endpoints {
			out = append(out, endpoint{url: "https://" + net.JoinHostPort(ip, h.port), transport: h.transport})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: resolve repo-servers: %w", errNoServer, errors.Join(errs...))
	}
	return out, nil
}

// resolve returns the addresses of name (name itself for an IP address).
func (c *Client) resolve(ctx context.Context, name string) ([]string, error) {
	if net.ParseIP(name) != nil {
		return []string{name}, nil
	}
	ips, err := c.opts.Resolver.LookupHost(ctx, name)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", name)
	}
	return ips, nil
}

// errNoServer is a request no repo-server answered.
var errNoServer = errors.New("no repo-server answered")

// Generate sends req to the next repo-server, and to the ones after it
// while a repo-server fails without an answer. When none answers, the
// error wraps ErrRepoUnreachable: like an unreachable Git server,
// it does not fail a sync operation, which is retried.
func (c *Client) Generate(ctx context.Context, req *Request) (*Response, error) {
	var resp Response
	if err := c.post(ctx, ManifestsPath, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// GenerateApplications sends req to a repo-server as Generate does.
func (c *Client) GenerateApplications(ctx context.Context, req *AppSetRequest) (*AppSetResponse, error) {
	var resp AppSetResponse
	if err := c.post(ctx, ApplicationSetsPath, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// post sends req to path of the next repo-server that answers and decodes
// its answer into resp.
func (c *Client) post(ctx context.Context, path string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode repo-server request: %w", err)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	eps, err := c.endpoints(ctx)
	if err != nil {
		return &Error{Code: CodeUnreachable, Message: err.Error()}
	}
	start := int(c.next.Add(1) % uint64(len(eps)))
	var errs []string
	for i := range eps {
		ep := eps[(start+i)%len(eps)]
		err := c.call(ctx, ep, path, body, resp)
		if err == nil {
			return nil
		}
		var we *Error
		if errors.As(err, &we) {
			return we
		}
		if parent.Err() == nil && ctx.Err() != nil {
			return &Error{Code: CodeUnreachable, Message: fmt.Sprintf("call repo-server: no answer within %s", c.opts.Timeout)}
		}
		if ctx.Err() != nil {
			return &Error{Code: CodeUnreachable, Message: fmt.Sprintf("call repo-server: %v", ctx.Err())}
		}
		errs = append(errs, err.Error())
	}
	return &Error{Code: CodeUnreachable, Message: fmt.Sprintf("%v: %s", errNoServer, strings.Join(errs, "; "))}
}

// call sends one request to one repo-server. It returns an *Error for an
// answer the repo-server gave, any other error when it gave none.
func (c *Client) call(ctx context.Context, ep endpoint, path string, body []byte, resp any) error {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.url+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hc := http.Client{Transport: ep.transport}
	hresp, err := hc.Do(hreq)
	if err != nil {
		return err
	}
	defer hresp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hresp.Body, c.opts.MaxResponseBytes+1))
	if err != nil {
		return fmt.Errorf("read repo-server response: %w", err)
	}
	if int64(len(data)) > c.opts.MaxResponseBytes {
		return &Error{Code: CodeLimit, Message: fmt.Sprintf("repo-server response passed its limit of %d bytes", c.opts.MaxResponseBytes)}
	}
	switch hresp.StatusCode {
	case http.StatusOK:
		if err := json.Unmarshal(data, resp); err != nil {
			return fmt.Errorf("decode repo-server response: %w", err)
		}
		return nil
	case http.StatusUnprocessableEntity, http.StatusServiceUnavailable, http.StatusBadRequest:
		var we Error
		if err := json.Unmarshal(data, &we); err == nil && we.Code != "" {
			return &we
		}
	}
	return fmt.Errorf("repo-server %s answered %s", hreq.URL.Host, hresp.Status)
}
