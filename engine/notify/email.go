package notify

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/smtp"
	"strconv"
	"strings"
	"time"
)

// emailOptions are an email service's configuration.
type emailOptions struct {
	Host               string `json:"host"`
	Port               int    `json:"port"`
	From               string `json:"from"`
	Username           string `json:"username,omitempty"`
	Password           string `json:"password,omitempty"`
	HTML               bool   `json:"html,omitempty"`
	InsecureSkipVerify bool   `json:"insecure_skip_verify,omitempty"`
}

type emailService struct {
	opts emailOptions
}

// smtpTimeout bounds one delivery over SMTP.
const smtpTimeout = 30 * time.Second

// Send mails the notification to the recipient (addresses separated by
// commas): subject and body from the template's email part, the message
// otherwise. Port 465 is TLS from the start; otherwise STARTTLS is used
// when the server offers it, and credentials are only sent over TLS.
func (e *emailService) Send(ctx context.Context, n Notification, d Destination) error {
	var to []string
	for _, a := range strings.Split(d.Recipient, ",") {
		if a = strings.TrimSpace(a); a != "" {
			to = append(to, a)
		}
	}
	if len(to) == 0 {
		return errors.New("email: no recipient address")
	}
	subject, body := "", n.Message
	if n.Email != nil {
		subject = n.Email.Subject
		if n.Email.Body != "" {
			body = n.Email.Body
		}
	}
	msg, err := e.message(to, subject, body, time.Now())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, smtpTimeout)
	defer cancel()
	addr := net.JoinHostPort(e.opts.Host, strconv.Itoa(e.opts.Port))
	tlsConfig := &tls.Config{ServerName: e.opts.Host, InsecureSkipVerify: e.opts.InsecureSkipVerify} //nolint:gosec // the operator's choice
	var conn net.Conn
	if e.opts.Port == 465 {
		conn, err = (&tls.Dialer{Config: tlsConfig}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return fmt.Errorf("email: %w", err)
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	c, err := smtp.NewClient(conn, e.opts.Host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("email: %w", err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok && e.opts.Port != 465 {
		if err := c.StartTLS(tlsConfig); err != nil {
			return fmt.Errorf("email: starttls: %w", err)
		}
	}
	if e.opts.Username != "" && e.opts.Password != "" {
		if err := c.Auth(smtp.PlainAuth("", e.opts.Username, e.opts.Password, e.opts.Host)); err != nil {
			return fmt.Errorf("email: auth: %w", err)
		}
	}
	if err := c.Mail(e.opts.From); err != nil {
		return fmt.Errorf("email: %w", err)
	}
	for _, a := range to {
		if err := c.Rcpt(a); err != nil {
			return fmt.Errorf("email: %w", err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("email: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("email: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("email: %w", err)
	}
	return c.Quit()
}

// message is the RFC 5322 message: From, To, Subject (encoded when not
// ASCII), Date, and the body as quoted-printable UTF-8 text or HTML.
func (e *emailService) message(to []string, subject, body string, now time.Time) ([]byte, error) {
	for _, h := range append([]string{e.opts.From, subject}, to...) {
		if strings.ContainsAny(h, "\r\n") {
			return nil, errors.New("email: a header contains a line break")
		}
	}
	ctype := "text/plain"
	if e.opts.HTML {
		ctype = "text/html"
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMIME-Version: 1.0\r\n", e.opts.From, strings.Join(to, ", "),
		mime.QEncoding.Encode("utf-8", subject), now.Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Content-Type: %s; charset=UTF-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n", ctype)
	qp := quotedprintable.NewWriter(&b)
	if _, err := qp.Write([]byte(body)); err != nil {
		return nil, err
	}
	if err := qp.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
