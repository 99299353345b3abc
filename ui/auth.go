package ui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Auth says how people sign in. Exactly one way must be chosen (Check):
//
//   - ProxyHeader: an authenticating proxy in front (oauth2-proxy, an
//     ingress with external auth) names the person in this header, and
//     their groups in ProxyGroupsHeader (comma-separated, repeatable). The
//     UI impersonates them, so its own identity needs the impersonate verb
//     on users and groups. The headers are believed only from ProxyCIDRs
//     (default loopback: the proxy as a sidecar), since whoever can reach
//     the UI directly could otherwise claim any name.
//   - TokenLogin: people paste a Kubernetes bearer token at /login; it is
//     checked with a SelfSubjectReview and kept in this process's memory
//     behind an HttpOnly, SameSite=Strict session cookie, never in the
//     browser. Only over HTTPS (TLS set), since the token crosses the wire.
//   - InsecureLocal: no sign-in; every request acts as the UI's own
//     kubeconfig. For local development only: the address must be
//     loopback.
type Auth struct {
	ProxyHeader       string
	ProxyGroupsHeader string
	ProxyCIDRs        []netip.Prefix
	TokenLogin        bool
	InsecureLocal     bool
	// TLS is set when the UI serves HTTPS itself: cookies are Secure.
	TLS bool
	// SessionTTL bounds a token session (default 8h).
	SessionTTL time.Duration
}

// ErrNoAuth is returned by Check when no way to sign in was chosen.
var ErrNoAuth = errors.New("no way to know who is signed in: put an authenticating proxy in front (--auth-proxy-header), " +
	"or serve HTTPS (--tls-cert-file, --tls-key-file) so people sign in with a bearer token, " +
	"or for local development only --insecure-local")

// DefaultProxyCIDRs trust the proxy headers from loopback only.
var DefaultProxyCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// Check reports whether a choice was made and makes sense.
func (a Auth) Check() error {
	switch {
	case a.InsecureLocal && (a.ProxyHeader != "" || a.TokenLogin):
		return errors.New("--insecure-local cannot be combined with --auth-proxy-header or token sign-in")
	case a.ProxyHeader != "" && a.TokenLogin:
		return errors.New("choose either --auth-proxy-header or token sign-in (HTTPS), not both")
	case a.ProxyGroupsHeader != "" && a.ProxyHeader == "":
		return errors.New("--auth-proxy-groups-header needs --auth-proxy-header")
	case a.TokenLogin && !a.TLS:
		return errors.New("token sign-in needs HTTPS: --tls-cert-file and --tls-key-file")
	case a.ProxyHeader == "" && !a.TokenLogin && !a.InsecureLocal:
		return ErrNoAuth
	}
	return nil
}

// CheckLocalAddr reports whether addr (host:port) listens on loopback only,
// as --insecure-local requires.
func CheckLocalAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("invalid address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return fmt.Errorf("--insecure-local listens on loopback only (127.0.0.1 or [::1]), not %q", addr)
	}
	return nil
}

// identity is the person a request acts as.
type identity struct {
	// User and Groups are who the person is (for impersonation and
	// display).
	User   string
	Groups []string
	// token is their bearer token (token sign-in).
	token string
	// session is their session id (token sign-in).
	session string
	// local: the UI's own identity (--insecure-local).
	local bool
}

// key identifies the person in caches.
func (id *identity) key() string {
	switch {
	case id.local:
		return "local"
	case id.session != "":
		return "session:" + id.session
	default:
		return "user:" + id.User + "\x00" + strings.Join(id.Groups, "\x00")
	}
}

// config is the REST config that acts as the person.
func (id *identity) config(base *rest.Config) *rest.Config {
	switch {
	case id.local:
		return rest.CopyConfig(base)
	case id.token != "":
		cfg := rest.AnonymousClientConfig(base)
		cfg.BearerToken = id.token
		return cfg
	default:
		cfg := rest.CopyConfig(base)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: id.User, Groups: id.Groups}
		return cfg
	}
}

// Cookie names.
const (
	sessionCookie = "tollgate_session"
	csrfCookie    = "tollgate_csrf"
)

// session is a signed-in person's token.
type session struct {
	token   string
	user    string
	groups  []string
	expires time.Time
}

// authenticator finds the person of a request.
type authenticator struct {
	opts Auth
	base *rest.Config
	// localUser is the name of the UI's own identity (--insecure-local).
	localUser string
	now       func() time.Time
	mu        sync.Mutex
	sessions  map[string]session
}

func newAuthenticator(a Auth, base *rest.Config) *authenticator {
	if len(a.ProxyCIDRs) == 0 {
		a.ProxyCIDRs = DefaultProxyCIDRs
	}
	if a.SessionTTL <= 0 {
		a.SessionTTL = 8 * time.Hour
	}
	return &authenticator{opts: a, base: base, now: time.Now, sessions: map[string]session{}}
}

// errNotSignedIn sends the browser to /login.
var errNotSignedIn = errors.New("not signed in")

// httpError is an error with the status code a page answers.
type httpError struct {
	code int
	err  error
}

func (e *httpError) Error() string { return e.err.Error() }
func (e *httpError) Unwrap() error { return e.err }

// identify returns the person of r.
func (a *authenticator) identify(r *http.Request) (*identity, error) {
	switch {
	case a.opts.InsecureLocal:
		return &identity{User: a.localUser, local: true}, nil
	case a.opts.ProxyHeader != "":
		return a.fromProxy(r)
	default:
		c, err := r.Cookie(sessionCookie)
		if err != nil {
			return nil, errNotSignedIn
		}
		a.mu.Lock()
		s, ok := a.sessions[c.Value]
		if ok && a.now().After(s.expires) {
			delete(a.sessions, c.Value)
			ok = false
		}
		a.mu.Unlock()
		if !ok {
			return nil, errNotSignedIn
		}
		return &identity{User: s.user, Groups: s.groups, token: s.token, session: c.Value}, nil
	}
}

// fromProxy believes the proxy's headers if the request came from a
// trusted address.
func (a *authenticator) fromProxy(r *http.Request) (*identity, error) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	ip, perr := netip.ParseAddr(host)
	if err != nil || perr != nil || !trusted(a.opts.ProxyCIDRs, ip.Unmap()) {
		return nil, &httpError{http.StatusForbidden, fmt.Errorf("request from %s, which is not the authenticating proxy (--auth-proxy-cidrs)", r.RemoteAddr)}
	}
	user := strings.TrimSpace(r.Header.Get(a.opts.ProxyHeader))
	if user == "" {
		return nil, &httpError{http.StatusUnauthorized, fmt.Errorf("the authenticating proxy sent no %s header", a.opts.ProxyHeader)}
	}
	if strings.HasPrefix(user, "system:") {
		return nil, &httpError{http.StatusForbidden, fmt.Errorf("user %q: names starting with system: are Kubernetes' own and are not impersonated", user)}
	}
	var groups []string
	if a.opts.ProxyGroupsHeader != "" {
		for _, v := range r.Header.Values(a.opts.ProxyGroupsHeader) {
			for g := range strings.SplitSeq(v, ",") {
				if g = strings.TrimSpace(g); g != "" {
					groups = append(groups, g)
				}
			}
		}
	}
	for _, g := range groups {
		if g == "system:masters" || (strings.HasPrefix(g, "system:") && g != "system:authenticated") {
			return nil, &httpError{http.StatusForbidden, fmt.Errorf("group %q: groups starting with system: are Kubernetes' own and are not impersonated", g)}
		}
	}
	return &identity{User: user, Groups: groups}, nil
}

func trusted(cidrs []netip.Prefix, ip netip.Addr) bool {
	for _, p := range cidrs {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// maxTokenBytes bounds a pasted token.
const maxTokenBytes = 16 << 10

// whoAmI asks the API server who cfg is; "" when it does not say.
func whoAmI(ctx context.Context, cfg *rest.Config) string {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return ""
	}
	rev, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return ""
	}
	return rev.Status.UserInfo.Username
}

// signIn checks token with a SelfSubjectReview and opens a session.
func (a *authenticator) signIn(ctx context.Context, token string) (string, session, error) {
	token = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(token), "Bearer "))
	if token == "" || len(token) > maxTokenBytes || strings.ContainsAny(token, " \r\n\t") {
		return "", session{}, errors.New("paste a Kubernetes bearer token (a ServiceAccount token, an OIDC id token)")
	}
	cfg := rest.AnonymousClientConfig(a.base)
	cfg.BearerToken = token
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", session{}, fmt.Errorf("check token: %w", err)
	}
	rev, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", session{}, fmt.Errorf("the API server did not accept the token: %w", err)
	}
	id, err := randomID()
	if err != nil {
		return "", session{}, err
	}
	s := session{token: token, user: rev.Status.UserInfo.Username, groups: rev.Status.UserInfo.Groups, expires: a.now().Add(a.opts.SessionTTL)}
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, old := range a.sessions { // drop expired sessions on the way
		if a.now().After(old.expires) {
			delete(a.sessions, k)
		}
	}
	a.sessions[id] = s
	return id, s, nil
}

func (a *authenticator) signOut(id string) {
	a.mu.Lock()
	delete(a.sessions, id)
	a.mu.Unlock()
}

func randomID() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// csrfToken returns the CSRF token of the browser, setting the cookie that
// holds it when there is none. Actions must post it back (double submit);
// the cookie is SameSite=Strict, so another site can neither send nor read
// it.
func (a *authenticator) csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) >= 32 {
		return c.Value
	}
	tok, err := randomID()
	if err != nil {
		return ""
	}
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: tok, Path: "/", HttpOnly: true, Secure: a.opts.TLS, SameSite: http.SameSiteStrictMode})
	return tok
}

// checkCSRF accepts a POST only with the browser's CSRF token in the form
// and, when the browser says where it comes from, from this origin.
func (a *authenticator) checkCSRF(r *http.Request) error {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return fmt.Errorf("cross-site request (Sec-Fetch-Site: %s)", site)
	}
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		if want := origin(r, a.opts.TLS); o != want {
			return fmt.Errorf("request from origin %s, not %s", o, want)
		}
	}
	c, err := r.Cookie(csrfCookie)
	if err != nil || len(c.Value) < 32 {
		return errors.New("no CSRF cookie: reload the page and try again")
	}
	if subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) != 1 {
		return errors.New("missing or wrong CSRF token: reload the page and try again")
	}
	return nil
}

// origin is the origin the browser sees this server at.
func origin(r *http.Request, tls bool) string {
	scheme := "http"
	if tls || r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
