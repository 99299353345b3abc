package cmp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/runtime"
	yamlutil "k8s.io/apimachinery/pkg/util/yaml"
)

// The service's gRPC names, Argo CD's.
const (
	serviceName                    = "plugin.ConfigManagementPluginService"
	methodGenerateManifest         = "/" + serviceName + "/GenerateManifest"
	methodCheckPluginConfiguration = "/" + serviceName + "/CheckPluginConfiguration"
	methodMatchRepository          = "/" + serviceName + "/MatchRepository"
	methodParametersAnnouncement   = "/" + serviceName + "/GetParametersAnnouncement"
)

// timeoutBuffer is how much earlier than the request's deadline the
// server's work ends, so the client gets the server's error rather than
// its own deadline (argocd-cmp-server's cmpTimeoutBuffer).
const timeoutBuffer = 100 * time.Millisecond

// shutdownGrace is how long Listen lets requests in flight finish once its
// context ends, before it cancels them.
const shutdownGrace = 5 * time.Second

// ServerOptions are a plugin server's settings.
type ServerOptions struct {
	// WorkDir holds each request's files, in a directory of its own
	// removed after the request ("": the temporary directory).
	WorkDir string
	// Env is the sidecar's environment, which the plugin's commands get
	// before the request's variables.
	Env []string
	// ExecTimeout bounds each command (Argo CD: ARGOCD_EXEC_TIMEOUT, 90s);
	// the request's deadline bounds it too.
	ExecTimeout time.Duration
	// MaxArchiveBytes bounds the tgz a request sends, MaxExtractBytes the
	// tar stream inside it and MaxEntries its entries.
	MaxArchiveBytes int64
	MaxExtractBytes int64
	MaxEntries      int
	// MaxMessageBytes bounds a gRPC message each way and a command's
	// stdout (Argo CD: 100 MiB).
	MaxMessageBytes int
	// Log gets a line per request at V(1), and per failed request at V(0).
	Log logr.Logger
}

// DefaultServerOptions are argocd-cmp-server's settings, with the
// process's environment, and limits on what a request may send.
func DefaultServerOptions() ServerOptions {
	return ServerOptions{
		Env:             os.Environ(),
		ExecTimeout:     90 * time.Second,
		MaxArchiveBytes: defaultMaxBytes,
		MaxExtractBytes: 4 * defaultMaxBytes,
		MaxEntries:      1 << 20,
		MaxMessageBytes: 100 << 20,
	}
}

// pluginServer is the service as gRPC dispatches it.
type pluginServer interface {
	generateManifest(grpc.ServerStream) error
	checkPluginConfiguration(context.Context) (*checkPluginConfigurationResponse, error)
	matchRepository(grpc.ServerStream) error
	parametersAnnouncement(grpc.ServerStream) error
}

// serviceDesc is plugin.ConfigManagementPluginService: one unary method and
// three client-streaming ones.
var serviceDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*pluginServer)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "CheckPluginConfiguration",
		Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			if err := dec(&empty{}); err != nil {
				return nil, err
			}
			return srv.(pluginServer).checkPluginConfiguration(ctx)
		},
	}},
	Streams: []grpc.StreamDesc{
		{StreamName: "GenerateManifest", ClientStreams: true, Handler: func(srv any, s grpc.ServerStream) error {
			return srv.(pluginServer).generateManifest(s)
		}},
		{StreamName: "MatchRepository", ClientStreams: true, Handler: func(srv any, s grpc.ServerStream) error {
			return srv.(pluginServer).matchRepository(s)
		}},
		{StreamName: "GetParametersAnnouncement", ClientStreams: true, Handler: func(srv any, s grpc.ServerStream) error {
			return srv.(pluginServer).parametersAnnouncement(s)
		}},
	},
	Metadata: "cmpserver/plugin/plugin.proto",
}

// service runs one plugin's commands.
type service struct {
	cfg  *Config
	opts ServerOptions
	run  runner
}

// NewServer returns a gRPC server speaking Argo CD's
// ConfigManagementPluginService for the plugin cfg, as argocd-cmp-server
// does; serve it with Listen.
func NewServer(cfg *Config, opts ServerOptions) (*grpc.Server, error) {
	if cfg == nil {
		return nil, errors.New("new plugin server: no config")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("new plugin server: %w", err)
	}
	if opts.MaxArchiveBytes <= 0 || opts.MaxExtractBytes <= 0 || opts.MaxEntries <= 0 || opts.MaxMessageBytes <= 0 {
		return nil, errors.New("new plugin server: limits must be positive")
	}
	s := &service{cfg: cfg, opts: opts, run: runner{timeout: opts.ExecTimeout, maxOutput: int64(opts.MaxMessageBytes)}}
	srv := grpc.NewServer(
		grpc.ForceServerCodecV2(codec{}),
		grpc.MaxRecvMsgSize(opts.MaxMessageBytes),
		grpc.MaxSendMsgSize(opts.MaxMessageBytes),
		grpc.ChainUnaryInterceptor(s.unaryInterceptor),
		grpc.ChainStreamInterceptor(s.streamInterceptor),
	)
	srv.RegisterService(&serviceDesc, s)
	return srv, nil
}

// Serve serves the plugin cfg with DefaultServerOptions on
// <socketDir>/<cfg.SocketName()> until ctx ends.
func Serve(ctx context.Context, cfg *Config, socketDir string) error {
	opts := DefaultServerOptions()
	opts.Log = logr.FromContextOrDiscard(ctx)
	srv, err := NewServer(cfg, opts)
	if err != nil {
		return err
	}
	return Listen(ctx, srv, filepath.Join(socketDir, cfg.SocketName()))
}

// Listen serves srv on the Unix socket at path until ctx ends, then stops
// it (requests in flight get shutdownGrace to finish) and removes the
// socket. A socket left at path by an earlier run is replaced; any other
// file there is an error.
func Listen(ctx context.Context, srv *grpc.Server, path string) error {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return fmt.Errorf("listen %s: exists and is not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("listen %s: %w", path, err)
		}
	}
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "unix", path)
	if err != nil {
		return fmt.Errorf("listen %s: %w", path, err)
	}
	defer os.Remove(path)
	logr.FromContextOrDiscard(ctx).Info("serving config management plugin", "socket", path)
	return serve(ctx, srv, l)
}

// serve serves srv on l until ctx ends, then stops it, giving requests in
// flight shutdownGrace to finish.
func serve(ctx context.Context, srv *grpc.Server, l net.Listener) error {
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve %s: %w", l.Addr(), err)
	case <-ctx.Done():
	}
	stopped := make(chan struct{})
	go func() { srv.GracefulStop(); close(stopped) }()
	t := time.NewTimer(shutdownGrace)
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C:
		srv.Stop()
		<-stopped
	}
	<-served
	return nil
}

// unaryInterceptor and streamInterceptor log each request and turn a
// panic into the request's error.
func (s *service) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	defer s.finish(info.FullMethod, time.Now(), &err)
	return h(ctx, req)
}

func (s *service) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	defer s.finish(info.FullMethod, time.Now(), &err)
	return h(srv, ss)
}

func (s *service) finish(method string, start time.Time, err *error) {
	if r := recover(); r != nil {
		s.opts.Log.Error(nil, "plugin request panicked", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		*err = status.Errorf(codes.Internal, "panic: %v", r)
	}
	log := s.opts.Log.WithValues("method", method, "duration", time.Since(start).String())
	if *err != nil {
		log.Info("plugin request failed", "error", (*err).Error())
		return
	}
	log.V(1).Info("plugin request served")
}

// request is a received request: the context of its work, its metadata
// and its source's directory in the extracted repository.
type request struct {
	ctx    context.Context
	md     *manifestRequestMetadata
	appDir string
	done   func() // removes the request's files
}

// receive receives a request's repository into a directory of its own.
func (s *service) receive(stream grpc.ServerStream) (*request, error) {
	ctx, cancel := context.WithCancel(stream.Context())
	if deadline, ok := ctx.Deadline(); ok {
		cancel()
		ctx, cancel = context.WithDeadline(stream.Context(), deadline.Add(-timeoutBuffer))
	}
	dir, err := os.MkdirTemp(s.opts.WorkDir, "cmp-")
	if err != nil {
		cancel()
		return nil, fmt.Errorf("error creating temp dir: %w", err)
	}
	r := &request{ctx: logr.NewContext(ctx, s.opts.Log), done: func() { cancel(); removeAll(dir) }}
	lim := receiveLimits{archiveBytes: s.opts.MaxArchiveBytes, extractBytes: s.opts.MaxExtractBytes, entries: s.opts.MaxEntries}
	md, repo, err := receive(stream, dir, lim, s.cfg.Spec.PreserveFileMode)
	if err == nil {
		r.md = md
		r.appDir, err = sourceDir(repo, md.AppRelPath)
	}
	if err != nil {
		r.done()
		return nil, err
	}
	return r, nil
}

// sourceDir is the source's directory appRelPath in repo; it may not be
// absolute or leave repo (links in repo are checked already).
func sourceDir(repo, appRelPath string) (string, error) {
	rel, err := entryName(filepath.ToSlash(appRelPath))
	if err != nil {
		return "", errors.New("illegal appPath: out of workDir bound")
	}
	dir := filepath.Join(repo, filepath.FromSlash(rel))
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("%s: app path does not exist", appRelPath)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s: app path is not a directory", appRelPath)
	}
	return dir, nil
}

// removeAll removes dir, making its directories writable first if a
// plain RemoveAll fails (an archive's or a plugin's read-only ones).
func removeAll(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

func (s *service) generateManifest(stream grpc.ServerStream) error {
	r, err := s.receive(stream)
	if err != nil {
		return fmt.Errorf("generate manifest error receiving stream: %w", err)
	}
	defer r.done()
	env := commandEnv(s.opts.Env, r.md.Env)
	if len(s.cfg.Spec.Init.Command) > 0 {
		if _, err := s.run.run(r.ctx, s.cfg.Spec.Init, r.appDir, env); err != nil {
			return fmt.Errorf("error generating manifests: %w", err)
		}
	}
	out, err := s.run.run(r.ctx, s.cfg.Spec.Generate, r.appDir, env)
	if err != nil {
		return fmt.Errorf("error generating manifests: %w", err)
	}
	manifests, err := splitManifests([]byte(out))
	if err != nil {
		return fmt.Errorf("error generating manifests: %w", err)
	}
	return stream.SendMsg(&manifestResponse{Manifests: manifests})
}

// splitManifests splits a YAML or JSON stream into its documents, each as
// JSON, leaving out empty and null ones, as argocd-cmp-server does.
func splitManifests(out []byte) ([]string, error) {
	d := yamlutil.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	var docs []string
	for {
		var ext runtime.RawExtension
		if err := d.Decode(&ext); err != nil {
			if errors.Is(err, io.EOF) {
				return docs, nil
			}
			return nil, fmt.Errorf("failed to unmarshal manifest: %w", err)
		}
		raw := bytes.TrimSpace(ext.Raw)
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		docs = append(docs, string(raw))
	}
}

func (s *service) checkPluginConfiguration(context.Context) (*checkPluginConfigurationResponse, error) {
	return &checkPluginConfigurationResponse{
		IsDiscoveryConfigured: s.cfg.Spec.Discover.IsDefined(),
		ProvideGitCreds:       s.cfg.Spec.ProvideGitCreds,
	}, nil
}

func (s *service) matchRepository(stream grpc.ServerStream) error {
	r, err := s.receive(stream)
	if err != nil {
		return fmt.Errorf("match repository error receiving stream: %w", err)
	}
	defer r.done()
	supported, enabled, err := s.match(r.ctx, r.appDir, r.md.Env)
	if err != nil {
		return fmt.Errorf("match repository error: %w", err)
	}
	return stream.SendMsg(&repositoryResponse{IsSupported: supported, IsDiscoveryEnabled: enabled})
}

// match decides as argocd-cmp-server does: by spec.discover.fileName (a
// filepath.Glob in the source's directory), else find.glob (a glob where
// ** spans directories), else find.command (supported when it prints
// something); with none, discovery is not enabled.
func (s *service) match(ctx context.Context, appDir string, env []envEntry) (supported, enabled bool, err error) {
	d := s.cfg.Spec.Discover
	switch {
	case d.FileName != "":
		pattern := filepath.Join(appDir, d.FileName)
		matches, err := filepath.Glob(pattern)
		if err != nil {
			return false, true, fmt.Errorf("error finding filename match for pattern %q: %w", pattern, err)
		}
		return len(matches) > 0, true, nil
	case d.Find.Glob != "":
		pattern := filepath.Join(appDir, d.Find.Glob)
		found, err := globAny(pattern)
		if err != nil {
			return false, true, fmt.Errorf("error finding glob match for pattern %q: %w", pattern, err)
		}
		return found, true, nil
	case len(d.Find.Command.Command) > 0:
		out, err := s.run.run(ctx, d.Find.Command, appDir, commandEnv(s.opts.Env, env))
		if err != nil {
			return false, true, fmt.Errorf("error running find command: %w", err)
		}
		return out != "", true, nil
	}
	return false, false, nil
}

func (s *service) parametersAnnouncement(stream grpc.ServerStream) error {
	r, err := s.receive(stream)
	if err != nil {
		return fmt.Errorf("parameters announcement error receiving stream: %w", err)
	}
	defer r.done()
	params := s.cfg.Spec.Parameters
	announced := params.Static
	if len(params.Dynamic.Command) > 0 {
		out, err := s.run.run(r.ctx, params.Dynamic, r.appDir, commandEnv(s.opts.Env, r.md.Env))
		if err != nil {
			return fmt.Errorf("get parameters announcement error: error executing dynamic parameter output command: %w", err)
		}
		var dynamic []ParameterAnnouncement
		if err := json.Unmarshal([]byte(out), &dynamic); err != nil {
			return fmt.Errorf("get parameters announcement error: error unmarshaling dynamic parameter output into ParametersAnnouncementResponse: %w", err)
		}
		// Dynamic first: the static ones, later, take precedence.
		announced = append(dynamic, params.Static...)
	}
	return stream.SendMsg(&parametersAnnouncementResponse{ParameterAnnouncements: announced})
}
