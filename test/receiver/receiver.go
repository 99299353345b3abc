// Package receiver runs notification receivers in a test's process: an HTTP
// server that records every request (and can be made to fail) and an SMTP
// server that records every message.
package receiver

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/emersion/go-smtp"
)

// Request is one request an HTTP receiver got.
type Request struct {
	Method, Path string
	// Query is the URL's raw query.
	Query  string
	Header http.Header
	Body   []byte
}

// HTTP records the requests it gets; while Fail is set it answers 503.
type HTTP struct {
	URL  string
	mu   sync.Mutex
	reqs []Request
	fail bool
	// refused counts the requests answered 503.
	refused int
	// answer is the body of a 200 answer; answers, by "METHOD /path",
	// override it.
	answer  []byte
	answers map[string][]byte
}

// NewHTTP starts an HTTP receiver that answers answer (nil: no body).
func NewHTTP(t testing.TB, answer []byte) *HTTP {
	return NewHTTPAnswers(t, nil, answer)
}

// NewHTTPAnswers starts an HTTP receiver that answers each request with
// the body answers holds for its "METHOD /path" (as an API such as
// GitHub's does), and the others with fallback.
func NewHTTPAnswers(t testing.TB, answers map[string][]byte, fallback []byte) *HTTP {
	h := &HTTP{answer: fallback, answers: answers}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		fail := h.fail
		if fail {
			h.refused++
		} else {
			h.reqs = append(h.reqs, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		}
		h.mu.Unlock()
		if fail {
			http.Error(w, "receiver down", http.StatusServiceUnavailable)
			return
		}
		answer, ok := h.answers[r.Method+" "+r.URL.Path]
		if !ok {
			answer = h.answer
		}
		_, _ = w.Write(answer)
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL
	return h
}

// SetFailing makes the receiver answer 503 (and record nothing) or not.
func (h *HTTP) SetFailing(fail bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fail = fail
}

// Refused returns how many requests were answered 503.
func (h *HTTP) Refused() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.refused
}

// Requests returns the requests recorded so far.
func (h *HTTP) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Request(nil), h.reqs...)
}

// Message is one message an SMTP receiver got.
type Message struct {
	From string
	To   []string
	Data []byte
}

// SMTP records the messages it gets.
type SMTP struct {
	// Host and Port are where it listens (loopback).
	Host string
	Port int
	mu   sync.Mutex
	msgs []Message
}

// NewSMTP starts an SMTP receiver without TLS or authentication.
func NewSMTP(t testing.TB) *SMTP {
	s := &SMTP{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &session{s: s}, nil }))
	srv.Domain = "localhost"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	addr := ln.Addr().(*net.TCPAddr)
	s.Host, s.Port = "127.0.0.1", addr.Port
	return s
}

// Messages returns the messages recorded so far.
func (s *SMTP) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

type session struct {
	s   *SMTP
	cur Message
}

func (x *session) Reset()        { x.cur = Message{} }
func (x *session) Logout() error { return nil }
func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	x.cur.From = from
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.cur.To = append(x.cur.To, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
	var b bytes.Buffer
	if _, err := io.Copy(&b, r); err != nil {
		return err
	}
	x.cur.Data = b.Bytes()
	x.s.mu.Lock()
	x.s.msgs = append(x.s.msgs, x.cur)
	x.s.mu.Unlock()
	return nil
}
