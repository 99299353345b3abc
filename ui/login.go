package ui

import (
	"net/http"
	"strings"
)

// loginPage asks for a bearer token (token sign-in only).
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	if !s.opts.Auth.TokenLogin {
		http.Redirect(w, r, "/applications", http.StatusSeeOther)
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

// safeNext keeps a redirect target on this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/applications"
	}
	return next
}
