package source

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/tollgate-dev/tollgate/reposerver"
	"golang.org/x/crypto/ssh"
)

// defaultSSHTimeout bounds the SSH connection handshake when the context
// has no deadline: go-git dials SSH without the context.
const defaultSSHTimeout = 30 * time.Second

// authMethod maps c to go-git authentication for ep. It returns nil for
// anonymous access.
func authMethod(ctx context.Context, c reposerver.Credentials, ep *transport.Endpoint) (transport.AuthMethod, error) {
	switch ep.Protocol {
	case "http", "https":
		switch {
		case c.BearerToken != "":
			return &githttp.TokenAuth{Token: c.BearerToken}, nil
		case c.Username != "" || c.Password != "":
			return &githttp.BasicAuth{Username: c.Username, Password: c.Password}, nil
		}
		return nil, nil
	case "ssh":
		return sshAuthMethod(ctx, c, ep)
	default: // git, file: no authentication
		return nil, nil
	}
}

func sshAuthMethod(ctx context.Context, c reposerver.Credentials, ep *transport.Endpoint) (transport.AuthMethod, error) {
	if len(c.SSHPrivateKey) == 0 {
		return nil, fmt.Errorf("%w: no ssh private key for %s", ErrAuthFailed, ep.Host)
	}
	user := ep.User
	if user == "" {
		user = "git"
	}
	keys, err := gitssh.NewPublicKeys(user, c.SSHPrivateKey, "")
	if err != nil {
		return nil, fmt.Errorf("%w: parse ssh private key: %w", ErrAuthFailed, err)
	}
	auth := &sshAuth{PublicKeys: keys, timeout: defaultSSHTimeout}
	if dl, ok := ctx.Deadline(); ok {
		auth.timeout = max(time.Until(dl), time.Second)
	}
	port := ep.Port
	if port <= 0 {
		port = 22
	}
	hostPort := ep.Host + ":" + strconv.Itoa(port)
	switch {
	case len(c.SSHKnownHosts) > 0:
		db, err := parseKnownHosts(c.SSHKnownHosts)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrAuthFailed, err)
		}
		keys.HostKeyCallback = db.callback()
		auth.algorithms = db.algorithms(hostPort)
	case c.Insecure:
		keys.HostKeyCallback = ssh.InsecureIgnoreHostKey() //nolint:gosec // asked for with insecure: true
	default:
		return nil, fmt.Errorf("%w: no known hosts to verify the ssh host key of %s (set known hosts or insecure)", ErrAuthFailed, ep.Host)
	}
	return auth, nil
}

// sshAuth is go-git public key authentication with a dial timeout and the
// host key algorithms known_hosts can verify.
type sshAuth struct {
	*gitssh.PublicKeys
	timeout    time.Duration
	algorithms []string
}

// ClientConfig implements gitssh.AuthMethod.
func (a *sshAuth) ClientConfig() (*ssh.ClientConfig, error) {
	cfg, err := a.PublicKeys.ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.Timeout = a.timeout
	if len(a.algorithms) > 0 {
		cfg.HostKeyAlgorithms = a.algorithms
	}
	return cfg, nil
}
