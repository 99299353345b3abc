package cmp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// defaultMaxBytes is Source.MaxBytes's default.
const defaultMaxBytes = 256 << 20

// Source is one application source to hand to a plugin.
type Source struct {
	// AppName is the Application's name (Argo CD's q.AppName). It names
	// the source in errors; the metadata's appName on the wire is, as
	// Argo CD sends it, the base name of the source's directory, and the
	// plugin sees the Application's name as ARGOCD_APP_NAME in Env.
	AppName string
	// Root is the repository checkout (a local directory); everything
	// under it but .git is sent.
	Root string
	// Path is the source's path, relative to Root ("." for the root).
	Path string
	// Env is the complete environment Argo CD sends, NAME=VALUE (build
	// variables, KUBE_*, ARGOCD_ENV_*, ARGOCD_APP_PARAMETERS, PARAM_*);
	// the caller computes it.
	Env []string
	// MaxBytes caps the archive sent and the manifests received (0: 256
	// MiB).
	MaxBytes int64
}

func (s Source) maxBytes() int64 {
	if s.MaxBytes > 0 {
		return s.MaxBytes
	}
	return defaultMaxBytes
}

// Generate finds the plugin for src as Argo CD's repo-server does and
// returns its manifests (each a YAML or JSON stream of documents, as the
// plugin printed them; argocd-cmp-server and tollgate's server send one
// JSON document each) and the plugin's name.
//
// name is the Application's spec.source.plugin.name. "" means discovery:
// the sockets in dir are tried in name order, and the first whose
// CheckPluginConfiguration says discovery is configured and whose
// MatchRepository says it supports the source is used. A name selects the
// socket <name>.sock in dir (Argo CD names a plugin's socket
// <metadata.name>-<spec.version> when the version is set); it is used
// unless its discovery is configured and says it does not support the
// source. Errors carry Argo CD's messages and name the socket.
//
// Unlike Argo CD's repo-server, Generate never sends the repository's Git
// credentials, even to a plugin whose CheckPluginConfiguration says
// provideGitCreds: tollgate keeps credentials out of plugins; a plugin
// that fetches more from Git must carry its own.
func Generate(ctx context.Context, dir, name string, src Source) (manifests []string, plugin string, err error) {
	a, p, err := connect(ctx, dir, name, src)
	if err != nil {
		return nil, "", err
	}
	defer a.Close()
	defer p.close()
	var resp manifestResponse
	if err := p.stream(ctx, methodGenerateManifest, a, &resp); err != nil {
		return nil, "", fmt.Errorf("error generating manifests in cmp %s: %w", p.socket, err)
	}
	return resp.Manifests, p.name, nil
}

// ParametersAnnouncement finds the plugin for src as Generate does and
// returns the parameters it announces for the source (Argo CD's
// GetAppDetails for a plugin source) and the plugin's name.
func ParametersAnnouncement(ctx context.Context, dir, name string, src Source) ([]ParameterAnnouncement, string, error) {
	a, p, err := connect(ctx, dir, name, src)
	if err != nil {
		return nil, "", err
	}
	defer a.Close()
	defer p.close()
	var resp parametersAnnouncementResponse
	if err := p.stream(ctx, methodParametersAnnouncement, a, &resp); err != nil {
		return nil, "", fmt.Errorf("failed to get parameter announcement from %s: %w", p.socket, err)
	}
	return resp.ParameterAnnouncements, p.name, nil
}

// connect archives src and finds its plugin.
func connect(ctx context.Context, dir, name string, src Source) (*archive, *pluginConn, error) {
	a, err := newArchive(ctx, src, src.maxBytes())
	if err != nil {
		if src.AppName != "" {
			err = fmt.Errorf("application %s: %w", src.AppName, err)
		}
		return nil, nil, err
	}
	p, err := detect(ctx, dir, name, a, src.maxBytes())
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, p, nil
}

// detect finds the plugin for the archived source, as Argo CD's
// DetectConfigManagementPlugin does.
func detect(ctx context.Context, dir, name string, a *archive, maxBytes int64) (*pluginConn, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("error getting absolute path for plugin socket dir %q: %w", dir, err)
	}
	if name != "" {
		p, err := supports(ctx, abs, name+".sock", a, maxBytes, true)
		switch {
		case p != nil:
			return p, nil
		case err != nil:
			return nil, fmt.Errorf("could not find cmp-server plugin with name %q supporting the given repository: %w", name, err)
		}
		return nil, fmt.Errorf("could not find cmp-server plugin with name %q supporting the given repository", name)
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("failed to list all plugins in dir: %w", err)
	}
	var lastErr error
	for _, e := range entries {
		if e.Type() != fs.ModeSocket {
			continue
		}
		p, err := supports(ctx, abs, e.Name(), a, maxBytes, false)
		if p != nil {
			return p, nil
		}
		if err != nil {
			lastErr = err
		}
	}
	if lastErr != nil {
		return nil, fmt.Errorf("could not find plugin supporting the given repository: %w", lastErr)
	}
	return nil, errors.New("could not find plugin supporting the given repository")
}

// supports returns a connection to the plugin on socket file in dir when
// it supports the source, nil when it does not, as Argo CD's cmpSupports:
// a named plugin without discovery, or whose discovery is not enabled,
// supports every source.
func supports(ctx context.Context, dir, file string, a *archive, maxBytes int64, named bool) (*pluginConn, error) {
	socket := filepath.Join(dir, file)
	if rel, err := filepath.Rel(dir, socket); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("invalid socket file path, %q is outside plugin socket dir %q", file, dir)
	}
	p, err := dial(socket, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("error dialing to cmp-server for plugin %s: %w", file, err)
	}
	p.name = strings.TrimSuffix(file, ".sock")
	var cfg checkPluginConfigurationResponse
	if err := p.conn.Invoke(ctx, methodCheckPluginConfiguration, &empty{}, &cfg); err != nil {
		p.close()
		return nil, fmt.Errorf("error checking plugin configuration %s: %w", file, err)
	}
	if !cfg.IsDiscoveryConfigured {
		if named {
			return p, nil
		}
		p.close()
		return nil, nil
	}
	var match repositoryResponse
	if err := p.stream(ctx, methodMatchRepository, a, &match); err != nil {
		p.close()
		return nil, fmt.Errorf("error checking repository support for plugin %s: %w", file, err)
	}
	if match.IsSupported || (!match.IsDiscoveryEnabled && named) {
		return p, nil
	}
	p.close()
	return nil, nil
}

// pluginConn is a connection to a plugin's socket.
type pluginConn struct {
	name   string
	socket string
	conn   *grpc.ClientConn
}

// dial connects to the plugin socket; messages it sends back are bounded
// by maxBytes.
func dial(socket string, maxBytes int64) (*pluginConn, error) {
	conn, err := grpc.NewClient("unix://"+socket,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(
			grpc.ForceCodecV2(codec{}),
			grpc.MaxCallRecvMsgSize(int(min(maxBytes, math.MaxInt32))),
		),
	)
	if err != nil {
		return nil, err
	}
	return &pluginConn{socket: socket, conn: conn}, nil
}

func (p *pluginConn) close() { p.conn.Close() }

// stream calls a client-streaming method: it sends the archive and
// receives the single response into resp.
func (p *pluginConn) stream(ctx context.Context, method string, a *archive, resp message) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := p.conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true}, method)
	if err != nil {
		return fmt.Errorf("error getting stream client: %w", err)
	}
	if err := a.send(ctx, s); err != nil {
		return fmt.Errorf("error sending stream: %w", err)
	}
	if err := s.RecvMsg(resp); err != nil {
		return fmt.Errorf("error receiving stream response: %w", err)
	}
	return nil
}
