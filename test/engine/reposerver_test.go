package engine_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"

	"github.com/tollgate-dev/tollgate/certs"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/server"
)

// repoServerName is the name the test repo-server's certificate is issued
// for; the client resolves it to the loopback address.
const repoServerName = "tollgate-repo-server.test"

// loopback resolves every name to 127.0.0.1.
type loopback struct{}

func (loopback) LookupHost(context.Context, string) ([]string, error) {
	return []string{"127.0.0.1"}, nil
}

// serveRepoServer serves svc over HTTPS on a loopback port, with a
// certificate from certs for repoServerName and requiring a client
// certificate of the same CA, until ctx ends, and returns a client of it: the wire between `tollgate controller --repo-server` and
// `tollgate repo-server`.
func serveRepoServer(ctx context.Context, svc *server.Service, log logr.Logger) (*reposerver.Client, error) {
	now := time.Now()
	ca, err := certs.CreateCA(now, time.Hour, nil)
	if err != nil {
		return nil, err
	}
	serving, err := certs.CreateServing(ca, []string{repoServerName}, now, time.Hour, nil)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	client, err := certs.CreateClient(ca, certs.ClientCommonName, now, time.Hour, nil)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	rootCAs := func() (*x509.CertPool, error) { return roots, nil }
	servingCert := &tls.Certificate{Certificate: [][]byte{serving.Cert.Raw}, PrivateKey: serving.Key, Leaf: serving.Cert}
	clientCert := &tls.Certificate{Certificate: [][]byte{client.Cert.Raw}, PrivateKey: client.Key, Leaf: client.Cert}
	srv := &http.Server{
		Handler:           server.NewHandler(svc, log.WithName("repo-server")),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         server.ServerTLSConfig(func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return servingCert, nil }, rootCAs),
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() { _ = svc.Run(ctx) }()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return reposerver.NewClient(reposerver.ClientOptions{
		Addresses:   []string{net.JoinHostPort(repoServerName, port)},
		RootCAs:     rootCAs,
		Certificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return clientCert, nil },
		Resolver:    loopback{},
	})
}
