package ui

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// browserless is an HTTP client with a cookie jar that does not follow
// redirects, over transport (nil: the default).
func browserless(transport http.RoundTripper) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// csrfOf opens page with c as user (none: no proxy header), which leaves
// the CSRF cookie in c's jar, and returns the form's token.
func csrfOf(t *testing.T, c *http.Client, page, user string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, page, nil)
	if user != "" {
		req.Header.Set(userHeader, user)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfField.FindSubmatch(body)
	if m == nil {
		t.Fatalf("%s has no CSRF field (status %d):\n%s", page, resp.StatusCode, body)
	}
	return string(m[1])
}

func post(t *testing.T, c *http.Client, target, user string, form url.Values, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.Header.Set(userHeader, user)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestCSRF: an action without the page's CSRF token, with another's, or
// from another site is refused with 403 and changes nothing; with it, the
// action is made.
func TestCSRF(t *testing.T) {
	page := proxyUI + "/applications/argocd/podinfo"
	c := browserless(nil)
	token := csrfOf(t, c, page, alice)
	bare := &http.Client{CheckRedirect: c.CheckRedirect} // no jar: never holds a cookie
	for _, tc := range []struct {
		name   string
		c      *http.Client
		form   url.Values
		header map[string]string
		want   string
	}{
		{"no cookie, no token", bare, url.Values{}, nil, "no CSRF cookie"},
		{"no cookie, a token", bare, url.Values{"csrf": {token}}, nil, "no CSRF cookie"},
		{"wrong token", c, url.Values{"csrf": {strings.Repeat("x", 43)}}, nil, "missing or wrong CSRF token"},
		{"no token", c, url.Values{}, nil, "missing or wrong CSRF token"},
		{"other origin", c, url.Values{"csrf": {token}}, map[string]string{"Origin": "http://evil.example"}, "request from origin http://evil.example"},
		{"cross-site fetch", c, url.Values{"csrf": {token}}, map[string]string{"Sec-Fetch-Site": "cross-site"}, "cross-site request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := post(t, tc.c, page+"/sync", alice, tc.form, tc.header)
			if code != http.StatusForbidden || !strings.Contains(body, tc.want) {
				t.Errorf("status %d, want 403 with %q:\n%s", code, tc.want, body)
			}
		})
	}
	var app v1alpha1.Application
	if err := admin.Get(t.Context(), types.NamespacedName{Namespace: argoNS, Name: "podinfo"}, &app); err != nil {
		t.Fatal(err)
	}
	if app.Operation != nil {
		t.Fatalf("a refused request set an operation: %+v", app.Operation)
	}
	code, _ := post(t, c, page+"/refresh", alice, url.Values{"csrf": {token}}, map[string]string{"Origin": strings.TrimSuffix(proxyUI, "/")})
	if code != http.StatusSeeOther {
		t.Errorf("refresh with the token: status %d, want 303", code)
	}
}

// TestSecretMasked: a Secret's values, and the last-applied annotation
// that repeats them, never reach the page. The Secret is in
// tollgate-system, which the webhook exempts: elsewhere it refuses a
// plaintext Secret, even from the administrator.
func TestSecretMasked(t *testing.T) {
	const value = "hunter2-do-not-show"
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: secretNS, Name: "ui-test-secret", Annotations: map[string]string{
			"kubectl.kubernetes.io/last-applied-configuration": `{"stringData":{"password":"` + value + `"}}`,
		}},
		StringData: map[string]string{"password": value, "user": "admin-user"},
	}
	if err := admin.Create(t.Context(), sec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Delete(t.Context(), sec) })
	code, body := get(t, proxyUI+"/applications/argocd/guestbook-dev/resource?group=&version=v1&kind=Secret&namespace="+secretNS+"&name=ui-test-secret", alice)
	if code != 200 {
		t.Fatalf("status %d:\n%s", code, body)
	}
	for _, secret := range []string{value, base64.StdEncoding.EncodeToString([]byte(value)), "admin-user", base64.StdEncoding.EncodeToString([]byte("admin-user")), "last-applied-configuration"} {
		if strings.Contains(body, secret) {
			t.Errorf("the page shows %q:\n%s", secret, body)
		}
	}
	for _, want := range []string{"password: &#43;&#43;&#43;&#43;&#43;&#43;&#43;&#43;", "user: &#43;&#43;&#43;&#43;&#43;&#43;&#43;&#43;", "Secret values are masked"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
}

// TestProxyIdentity: the proxy's header is required, and Kubernetes' own
// names are never impersonated.
func TestProxyIdentity(t *testing.T) {
	for _, tc := range []struct {
		name, user, group string
		code              int
		want              string
	}{
		{"no header", "", "", 401, "the authenticating proxy sent no X-Remote-User header"},
		{"system user", "system:admin", "", 403, "names starting with system: are Kubernetes&#39; own"},
		{"system:masters", "mallory", "system:masters", 403, `group &#34;system:masters&#34;`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, proxyUI+"/applications", nil)
			if tc.user != "" {
				req.Header.Set(userHeader, tc.user)
			}
			if tc.group != "" {
				req.Header.Set(groupHeader, tc.group)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.want) {
				t.Errorf("status %d, want %d with %q:\n%s", resp.StatusCode, tc.code, tc.want, body)
			}
		})
	}
}

// TestTokenSignIn: over HTTPS, a pasted ServiceAccount token signs in,
// the pages act as that ServiceAccount, a bad token is refused, and
// signing out ends the session.
func TestTokenSignIn(t *testing.T) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	tr, err := cs.CoreV1().ServiceAccounts(argoNS).CreateToken(t.Context(), "ui-test-token", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(tokenCA)
	c := browserless(&http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}})
	resp, err := c.Get(tokenUI + "/applications")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login") {
		t.Fatalf("signed out, /applications answers %d to %q, want a redirect to /login", resp.StatusCode, resp.Header.Get("Location"))
	}
	csrf := csrfOf(t, c, tokenUI+"/login?next=/applications", "")
	if code, body := post(t, c, tokenUI+"/login", "", url.Values{"csrf": {csrf}, "token": {"not-a-token"}, "next": {"/applications"}}, nil); code != 401 || !strings.Contains(body, "the API server did not accept the token") {
		t.Errorf("bad token: status %d:\n%s", code, body)
	}
	if code, _ := post(t, c, tokenUI+"/login", "", url.Values{"token": {tr.Status.Token}}, nil); code != 403 {
		t.Errorf("sign-in without the CSRF token: status %d, want 403", code)
	}
	// After sign-in, only a path of this site is followed: what a browser
	// would resolve off-site (it drops tabs, reads a backslash as "/") leads to
	// the list, from the form and from the link.
	for next, want := range map[string]string{
		"/applications/argocd/guestbook-dev": "/applications/argocd/guestbook-dev",
		"/\t/evil.example/phish":             "/applications",
		`/\evil.example`:                     "/applications",
		"//evil.example":                     "/applications",
		"/%09/evil.example":                  "/applications",
		"https://evil.example/":              "/applications",
	} {
		nc := browserless(c.Transport)
		resp, err := nc.Get(tokenUI + "/login?next=" + url.QueryEscape(next))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := csrfField.FindSubmatch(body)
		if resp.StatusCode != 200 || m == nil || !strings.Contains(string(body), `name="next" value="`+want+`"`) {
			t.Fatalf("login page for next=%q: status %d, want a form carrying next %q:\n%s", next, resp.StatusCode, want, body)
		}
		csrf := string(m[1])
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, tokenUI+"/login", strings.NewReader(url.Values{"csrf": {csrf}, "token": {tr.Status.Token}, "next": {next}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err = nc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
			t.Errorf("sign-in with next=%q: %d to %q, want 303 to %q", next, resp.StatusCode, resp.Header.Get("Location"), want)
		}
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, tokenUI+"/login", strings.NewReader(url.Values{"csrf": {csrf}, "token": {tr.Status.Token}, "next": {"/applications"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/applications" {
		t.Fatalf("sign-in: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var session *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == "tollgate_session" {
			session = ck
		}
	}
	if session == nil || !session.HttpOnly || !session.Secure || session.SameSite != http.SameSiteStrictMode || strings.Contains(session.Value, tr.Status.Token) {
		t.Errorf("session cookie %+v: want HttpOnly, Secure, SameSite=Strict, without the token", session)
	}
	resp, err = c.Get(tokenUI + "/applications")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"system:serviceaccount:argocd:ui-test-token", "guestbook-dev"} {
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("signed in: status %d, page lacks %q:\n%s", resp.StatusCode, want, body)
		}
	}
	if code, _ := post(t, c, tokenUI+"/logout", "", url.Values{"csrf": {csrf}}, nil); code != http.StatusSeeOther {
		t.Errorf("sign out: status %d", code)
	}
	resp, err = c.Get(tokenUI + "/applications")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after signing out, /applications answers %d, want a redirect to /login", resp.StatusCode)
	}
}

// TestRefusesToStart: without a way to sign people in, or with
// --insecure-local on a non-loopback address, tollgate ui exits 2 naming
// the flags.
func TestRefusesToStart(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no way to know who is signed in"},
		{[]string{"--insecure-local", "--addr", "0.0.0.0:0"}, "--insecure-local listens on loopback only"},
		{[]string{"--insecure-local", "--auth-proxy-header", "X-User"}, "--insecure-local cannot be combined"},
	} {
		out, err := exec.CommandContext(t.Context(), tollgate, append([]string{"ui", "--kubeconfig", kubeconfig}, tc.args...)...).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("tollgate ui %v: %v, want exit 2 with %q:\n%s", tc.args, err, tc.want, out)
		}
	}
}

// TestEventsFollowRBAC: a change of an Application reaches the event
// stream of alice, who may get it, and not bob's.
func TestEventsFollowRBAC(t *testing.T) {
	streams := map[string]<-chan string{}
	for _, user := range []string{alice, "bob"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, proxyUI+"/events", nil)
		req.Header.Set(userHeader, user)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
			t.Fatalf("%s's /events: %d %s", user, resp.StatusCode, ct)
		}
		lines := make(chan string, 100)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					lines <- d
				}
			}
		}()
		streams[user] = lines
	}
	// Both streams are subscribed: the server subscribes a stream before
	// it sends the headers read above.
	label := "ui-test-" + time.Now().Format("150405.000")
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: "guestbook-prod"}}
	if err := admin.Patch(t.Context(), app, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"ui-test":"`+strings.ReplaceAll(label, ".", "")+`"}}}`))); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	for got := false; !got; {
		select {
		case d := <-streams[alice]:
			got = d == "argocd/guestbook-prod"
		case <-deadline:
			t.Fatal("alice's stream never named argocd/guestbook-prod")
		}
	}
	select {
	case d := <-streams["bob"]:
		t.Errorf("bob's stream named %q", d)
	case <-time.After(2 * time.Second):
	}
}

// TestPages: the resource tree shows what the Application's Deployment
// owns (by live owner references), the project page states its limits in
// words, and tollgate dev's own UI (--insecure-local, as the
// administrator) renders a diff and the audit.
func TestPages(t *testing.T) {
	code, body := get(t, proxyUI+"/applications/argocd/guestbook-dev", alice)
	tree := regexp.MustCompile(`(?s)<span class="kind">Deployment</span>.*guestbook-dev/guestbook-ui-dev</a>.*?<ul><li>\s*<span class="kind">ReplicaSet</span>.*guestbook-dev/guestbook-ui-dev-[a-z0-9]+</a>.*?<ul><li>\s*<span class="kind">Pod</span>`)
	if code != 200 || !tree.MatchString(body) {
		t.Errorf("application page: status %d, no Deployment → ReplicaSet → Pod in the tree:\n%s", code, body)
	}
	code, body = get(t, proxyUI+"/projects/argocd/team-web", alice)
	for _, want := range []string{"Deploying into namespace guestbook-* of cluster https://kubernetes.default.svc.", "Namespaced objects of kind networking.k8s.io/NetworkPolicy.", "Cluster-scoped objects of kind core/Namespace."} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("project page: status %d, lacks %q:\n%s", code, want, body)
		}
	}
	code, body = get(t, devUI+"/applications/argocd/guestbook-prod/diff", "")
	if code != 200 || !strings.Contains(body, "Diff: live → desired at") {
		t.Errorf("diff page: status %d:\n%s", code, body)
	}
	code, body = get(t, devUI+"/audit", "")
	if code != 200 || !strings.Contains(body, "<h1>Audit") || !strings.Contains(body, "tollgate-dev-admin") {
		t.Errorf("audit page: status %d:\n%s", code, body)
	}
}

// TestControllerUI: tollgate controller --ui-addr serves the same UI from
// its manager (its own cache feeds the event stream).
func TestControllerUI(t *testing.T) {
	code, body := get(t, controllerUI+"/applications", "")
	if code != 200 || !strings.Contains(body, "No Applications that you may see") || !strings.Contains(body, "tollgate-dev-admin") {
		t.Errorf("controller's UI: status %d:\n%s", code, body)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, controllerUI+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("controller's /events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
