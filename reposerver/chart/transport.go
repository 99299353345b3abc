package chart

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tollgate-dev/tollgate/reposerver"
)

// maxRedirects is how many redirects one request follows, each within the
// scheme and host the request was made to.
const maxRedirects = 5

// metadataAddrs are cloud metadata endpoints outside the link-local
// ranges (which hold the others, 169.254.169.254 first): AWS's IPv6
// instance metadata, Alibaba Cloud's metadata and Azure's WireServer.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
	netip.MustParseAddr("168.63.129.16"),
}

// nat64 is the well-known NAT64 prefix: 64:ff9b::a9fe:a9fe reaches
// 169.254.169.254 through a NAT64 gateway.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// httpClient returns the client of repository r (Helm repository or OCI
// registry): TLS verified unless Insecure, no proxy, each request bounded
// by Timeout. An index and a registry are tenant-chosen servers that
// name other URLs (chart archives, token realms) and answer redirects, so
// the client holds three lines:
//
//   - r's TLS client certificate is presented only on connections to r's
//     own scheme, host and port, never to a host an index or a registry
//     points at;
//   - a redirect is followed only within the scheme and host of the
//     request, at most maxRedirects times, so basic auth and bearer
//     tokens never follow one to another host;
//   - nothing is dialled at a loopback address (unless
//     Options.AllowLoopback allows it), a link-local address (fe80::/10,
//     169.254.0.0/16, where cloud metadata endpoints are) or another
//     cloud metadata address: the check is made on the address a name
//     resolved to, as the connection is dialled, for every connection
//     (the repository's, a chart URL's, a redirect's).
func (c *Cache) httpClient(r reposerver.HelmRepository) (*http.Client, error) {
	plain := c.transport(r, nil)
	var rt http.RoundTripper = plain
	if r.TLSClientCertData != "" {
		cert, err := tls.X509KeyPair([]byte(r.TLSClientCertData), []byte(r.TLSClientCertKey))
		if err != nil {
			return nil, fmt.Errorf("client certificate of %s: %w", redact(r.URL), err)
		}
		rt = &hostTransport{origin: repositoryOrigin(r.URL), own: c.transport(r, &cert), other: plain}
	}
	return &http.Client{Transport: rt, Timeout: c.opts.Timeout, CheckRedirect: checkRedirect}, nil
}

// transport returns a transport for r's requests that presents cert (none
// when nil) and dials only addresses checkDial allows.
func (c *Cache) transport(r reposerver.HelmRepository, cert *tls.Certificate) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // a proxy would be dialled in place of the address checked
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: c.checkDial}
	tr.DialContext = dialer.DialContext
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: r.Insecure} //nolint:gosec // the repository Secret asks for it
	if cert != nil {
		tr.TLSClientConfig.Certificates = []tls.Certificate{*cert}
	}
	return tr
}

// checkRedirect follows a redirect only within the scheme and host of the
// first request, at most maxRedirects times.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("redirect %w: more than %d redirects", ErrNotAllowed, maxRedirects)
	}
	if first := via[0].URL; origin(req.URL) != origin(first) {
		return fmt.Errorf("redirect to %s %w: a repository may redirect only within %s://%s", redact(req.URL.String()), ErrNotAllowed, first.Scheme, first.Host)
	}
	return nil
}

// checkDial is the dialer's Control: it refuses to connect to address (the
// resolved ip:port) when it is loopback (unless Options.AllowLoopback
// allows it), link-local or a cloud metadata endpoint.
func (c *Cache) checkDial(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("address %q %w: not an IP address and port", address, ErrNotAllowed)
	}
	ip := ap.Addr().WithZone("").Unmap()
	if nat64.Contains(ip) {
		a := ip.As16()
		ip = netip.AddrFrom4([4]byte(a[12:]))
	}
	switch {
	case ip.IsLoopback(), ip.IsUnspecified():
		if c.opts.AllowLoopback != nil && c.opts.AllowLoopback(netip.AddrPortFrom(ip, ap.Port())) {
			return nil
		}
		return fmt.Errorf("address %w: %s is a loopback address", ErrNotAllowed, ip)
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast(), slices.Contains(metadataAddrs, ip):
		return fmt.Errorf("address %w: %s is link-local or a cloud metadata endpoint", ErrNotAllowed, ip)
	}
	return nil
}

// hostTransport sends the requests to one origin (a repository's scheme,
// host and port) through own, which presents the repository's client
// certificate, and every other request through other, which presents
// none.
type hostTransport struct {
	origin     string
	own, other *http.Transport
}

func (t *hostTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.origin != "" && origin(req.URL) == t.origin {
		return t.own.RoundTrip(req)
	}
	return t.other.RoundTrip(req)
}

// CloseIdleConnections closes the idle connections of both transports.
func (t *hostTransport) CloseIdleConnections() {
	t.own.CloseIdleConnections()
	t.other.CloseIdleConnections()
}

// origin returns scheme://host:port of u, lowercased, with the scheme's
// default port spelt out.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// repositoryOrigin returns the origin requests to the repository or
// registry repoURL go to: an OCI registry (oci://, or no scheme) is
// reached over HTTPS. It is "" for a URL that does not parse.
func repositoryOrigin(repoURL string) string {
	s := strings.TrimSpace(repoURL)
	if rest, ok := reposerver.CutOCIScheme(s); ok {
		s = "https://" + rest
	} else if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return ""
	}
	return origin(u)
}
