package ui

import (
	"net/http"
	"net/url"
	"strings"
)

// loginPage asks for a bearer token (token sign-in only).
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	if !s.opts.Auth.TokenLogin {
		http.Redirect(w, r, defaultNext, http.StatusSeeOther)
		return
	}
	s.render(w, r, nil, http.StatusOK, "login", view{Title: "Sign in", Data: map[string]any{"Next": safeNext(r.URL.Query().Get("next"))}})
}

// login checks the pasted token and opens a session.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !s.opts.Auth.TokenLogin {
		http.Error(w, "sign-in is by the authenticating proxy", http.StatusNotFound)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 2*maxTokenBytes)
	next := safeNext(r.PostFormValue("next"))
	if err := s.auth.checkCSRF(r); err != nil {
		s.fail(w, r, nil, &httpError{http.StatusForbidden, err})
		return
	}
	id, _, err := s.auth.signIn(r.Context(), r.PostFormValue("token"))
	if err != nil {
		s.render(w, r, nil, http.StatusUnauthorized, "login", view{Title: "Sign in", Data: map[string]any{"Next": next, "Error": err.Error()}})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode, MaxAge: int(s.auth.opts.SessionTTL.Seconds())})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout ends the session.
func (s *Server) logout(w http.ResponseWriter, r *http.Request, p *person) {
	if err := s.auth.checkCSRF(r); err != nil {
		s.fail(w, r, p, &httpError{http.StatusForbidden, err})
		return
	}
	s.auth.signOut(p.session)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// defaultNext is where sign-in leads when next is missing or refused.
const defaultNext = "/applications"

// safeNext keeps a redirect target on this site: it returns next when it
// is an absolute path of this origin, else defaultNext. Browsers drop tabs
// and newlines from a URL and read a backslash as a slash, so "/\t/evil"
// and "/\\evil" lead off-site as "//evil" does: next is refused when it,
// or its percent-decoded path, holds a control character (below 0x20, or
// 0x7f) or a backslash, when it does not start with exactly one "/", and
// when it parses with a scheme, a host or user information. A
// percent-encoded "/" or control character ("/%2F/evil", "/%09/evil")
// stays encoded in the browser and so on this site, but no page of the UI
// has one in its path: it is refused too rather than reasoned about.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || unsafeInPath(next) {
		return defaultNext
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		!strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") || unsafeInPath(u.Path) {
		return defaultNext
	}
	return next
}

// unsafeInPath reports whether s holds a control character or a
// backslash.
func unsafeInPath(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' })
}
