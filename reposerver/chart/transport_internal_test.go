package chart

import (
	"errors"
	"net/http"
	"net/netip"
	"testing"
)

// TestCheckDial: the addresses the chart client refuses to dial, whatever
// name resolved to them, and the loopback addresses Options.AllowLoopback
// lets through.
func TestCheckDial(t *testing.T) {
	c := &Cache{opts: Options{AllowLoopback: func(ap netip.AddrPort) bool { return ap.Port() == 8443 }}}
	for _, tt := range []struct {
		address string
		want    string // "" when allowed
	}{
		{"93.184.216.34:443", ""},
		{"10.0.0.1:443", ""},
		{"[2001:db8::1]:443", ""},
		{"127.0.0.1:8443", ""}, // allowed by the option
		{"[::1]:8443", ""},
		{"127.0.0.1:443", "address not allowed: 127.0.0.1 is a loopback address"},
		{"127.1.2.3:8080", "address not allowed: 127.1.2.3 is a loopback address"},
		{"[::1]:443", "address not allowed: ::1 is a loopback address"},
		{"0.0.0.0:443", "address not allowed: 0.0.0.0 is a loopback address"},
		{"[::ffff:127.0.0.1]:443", "address not allowed: 127.0.0.1 is a loopback address"},
		{"169.254.169.254:80", "address not allowed: 169.254.169.254 is link-local or a cloud metadata endpoint"},
		{"169.254.170.2:80", "address not allowed: 169.254.170.2 is link-local or a cloud metadata endpoint"},
		{"[::ffff:169.254.169.254]:80", "address not allowed: 169.254.169.254 is link-local or a cloud metadata endpoint"},
		{"[64:ff9b::a9fe:a9fe]:80", "address not allowed: 169.254.169.254 is link-local or a cloud metadata endpoint"},
		{"[fe80::1%eth0]:443", "address not allowed: fe80::1 is link-local or a cloud metadata endpoint"},
		{"[fd00:ec2::254]:80", "address not allowed: fd00:ec2::254 is link-local or a cloud metadata endpoint"},
		{"100.100.100.200:80", "address not allowed: 100.100.100.200 is link-local or a cloud metadata endpoint"},
		{"168.63.129.16:80", "address not allowed: 168.63.129.16 is link-local or a cloud metadata endpoint"},
	} {
		t.Run(tt.address, func(t *testing.T) {
			err := c.checkDial("tcp", tt.address, nil)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("checkDial = %v, want allowed", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want || !errors.Is(err, ErrNotAllowed)):
				t.Errorf("checkDial = %v, want %q", err, tt.want)
			}
		})
	}
	if err := (&Cache{}).checkDial("tcp", "127.0.0.1:8443", nil); err == nil {
		t.Error("without AllowLoopback, loopback was allowed")
	}
}

// TestFileRedirect: a remote file's download follows redirects to other
// hosts, never from https to http, never to another scheme, at most
// maxRedirects times.
func TestFileRedirect(t *testing.T) {
	c := &Cache{opts: Options{AllowInsecure: true}}
	req := func(u string) *http.Request {
		r, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	first := []*http.Request{req("https://github.com/org/repo/releases/download/v1/install.yaml")}
	if err := c.fileRedirect(req("https://objects.example.com/asset"), first); err != nil {
		t.Errorf("to another host: %v", err)
	}
	if err := c.fileRedirect(req("http://objects.example.com/asset"), first); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("from https to http: %v, want ErrNotAllowed", err)
	}
	if err := c.fileRedirect(req("ftp://objects.example.com/asset"), []*http.Request{req("http://example.com/x.yaml")}); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("to ftp: %v, want ErrNotAllowed", err)
	}
	many := make([]*http.Request, maxRedirects+1)
	for i := range many {
		many[i] = first[0]
	}
	if err := c.fileRedirect(req("https://objects.example.com/asset"), many); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("past %d redirects: %v, want ErrNotAllowed", maxRedirects, err)
	}
}
