package cmp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The interop tests put our ends against gRPC's own proto codec with
// messages from plugin.proto's descriptors, as Argo CD's generated code
// runs: default content-type, no forced codec.

// dyn makes the protobuf messages of plugin.proto.
type dyn struct {
	files interface {
		FindDescriptorByName(protoreflect.FullName) (protoreflect.Descriptor, error)
	}
}

func (d dyn) new(t *testing.T, name string) *dynamicpb.Message {
	t.Helper()
	desc, err := d.files.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		t.Fatal(err)
	}
	return dynamicpb.NewMessage(desc.(protoreflect.MessageDescriptor))
}

func field(m protoreflect.Message, name string) protoreflect.Value {
	return m.Get(m.Descriptor().Fields().ByName(protoreflect.Name(name)))
}

func setField(m protoreflect.Message, name string, v protoreflect.Value) {
	m.Set(m.Descriptor().Fields().ByName(protoreflect.Name(name)), v)
}

// TestInteropClient runs Generate against a server built like Argo CD's.
func TestInteropClient(t *testing.T) {
	d := dyn{pluginDescriptors(t)}
	var gotMD map[string]any
	var archive bytes.Buffer
	desc := grpc.ServiceDesc{
		ServiceName: serviceName,
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "CheckPluginConfiguration", Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			if err := dec(d.new(t, "google.protobuf.Empty")); err != nil {
				return nil, err
			}
			return d.new(t, "plugin.CheckPluginConfigurationResponse"), nil // no discovery
		}}},
		Streams: []grpc.StreamDesc{{StreamName: "GenerateManifest", ClientStreams: true, Handler: func(_ any, s grpc.ServerStream) error {
			for {
				req := d.new(t, "plugin.AppStreamRequest")
				err := s.RecvMsg(req)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return err
				}
				if req.Has(req.Descriptor().Fields().ByName("metadata")) {
					md := field(req, "metadata").Message()
					env := map[string]string{}
					list := field(md, "env").List()
					for i := range list.Len() {
						e := list.Get(i).Message()
						env[field(e, "name").String()] = field(e, "value").String()
					}
					gotMD = map[string]any{
						"appName": field(md, "appName").String(), "appRelPath": field(md, "appRelPath").String(),
						"checksum": field(md, "checksum").String(), "size": field(md, "size").Int(), "env": env,
					}
					continue
				}
				archive.Write(field(field(req, "file").Message(), "chunk").Bytes())
			}
			resp := d.new(t, "plugin.ManifestResponse")
			list := resp.Mutable(resp.Descriptor().Fields().ByName("manifests")).List()
			list.Append(protoreflect.ValueOfString(`{"kind":"ConfigMap"}`))
			list.Append(protoreflect.ValueOfString("kind: Secret\n"))
			return s.SendMsg(resp)
		}}},
	}
	srv := grpc.NewServer()
	srv.RegisterService(&desc, nil)
	sockets := socketDir(t)
	l, err := net.Listen("unix", filepath.Join(sockets, "argo.sock"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serve(t.Context(), srv, l) }()
	t.Cleanup(func() { <-done })

	root := makeRepo(t, map[string]string{"apps/guestbook/a.yaml": "a: 1\n"})
	manifests, plugin, err := Generate(t.Context(), sockets, "argo", Source{
		AppName: "guestbook", Root: root, Path: "apps/guestbook", Env: []string{"ARGOCD_APP_NAME=guestbook", "PARAM_X=1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`{"kind":"ConfigMap"}`, "kind: Secret\n"}, manifests); diff != "" {
		t.Errorf("manifests (-want +got):\n%s", diff)
	}
	if plugin != "argo" {
		t.Errorf("plugin = %q, want argo", plugin)
	}
	sum := sha256.Sum256(archive.Bytes())
	want := map[string]any{
		"appName": "guestbook", "appRelPath": "apps/guestbook", "checksum": hex.EncodeToString(sum[:]), "size": int64(archive.Len()),
		"env": map[string]string{"ARGOCD_APP_NAME": "guestbook", "PARAM_X": "1"},
	}
	if diff := cmp.Diff(want, gotMD); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
}

// TestInteropServer calls our server as Argo CD's repo-server does.
func TestInteropServer(t *testing.T) {
	d := dyn{pluginDescriptors(t)}
	sockets := socketDir(t)
	socket := startPlugin(t, sockets, `kind: ConfigManagementPlugin
metadata: {name: ours}
spec:
  generate: {command: [sh, -c, 'cat a.yaml; echo "---"; echo "$ARGOCD_APP_NAME"']}
  discover: {fileName: a.yaml}
`, testServerOptions(t))
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	cfg := d.new(t, "plugin.CheckPluginConfigurationResponse")
	if err := conn.Invoke(t.Context(), methodCheckPluginConfiguration, d.new(t, "google.protobuf.Empty"), cfg); err != nil {
		t.Fatal(err)
	}
	if !field(cfg, "isDiscoveryConfigured").Bool() || field(cfg, "provideGitCreds").Bool() {
		t.Errorf("CheckPluginConfiguration = %v, want discovery and no credentials", cfg)
	}

	tgz := makeTgz(t, regular("app/a.yaml", "kind: ConfigMap\n"))
	sum := sha256.Sum256(tgz)
	md := d.new(t, "plugin.ManifestRequestMetadata")
	setField(md, "appName", protoreflect.ValueOfString("app"))
	setField(md, "appRelPath", protoreflect.ValueOfString("app"))
	setField(md, "checksum", protoreflect.ValueOfString(hex.EncodeToString(sum[:])))
	setField(md, "size", protoreflect.ValueOfInt64(int64(len(tgz))))
	env := d.new(t, "plugin.EnvEntry")
	setField(env, "name", protoreflect.ValueOfString("ARGOCD_APP_NAME"))
	setField(env, "value", protoreflect.ValueOfString("guestbook"))
	md.Mutable(md.Descriptor().Fields().ByName("env")).List().Append(protoreflect.ValueOfMessage(env))
	head := d.new(t, "plugin.AppStreamRequest")
	setField(head, "metadata", protoreflect.ValueOfMessage(md))
	reqs := []*dynamicpb.Message{head}
	for _, c := range chunks(tgz) {
		f := d.new(t, "plugin.File")
		setField(f, "chunk", protoreflect.ValueOfBytes(c.File.Chunk))
		r := d.new(t, "plugin.AppStreamRequest")
		setField(r, "file", protoreflect.ValueOfMessage(f))
		reqs = append(reqs, r)
	}

	call := func(method string, resp *dynamicpb.Message) {
		t.Helper()
		s, err := conn.NewStream(t.Context(), &grpc.StreamDesc{ClientStreams: true}, method)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reqs {
			if err := s.SendMsg(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.CloseSend(); err != nil {
			t.Fatal(err)
		}
		if err := s.RecvMsg(resp); err != nil {
			t.Fatal(err)
		}
	}
	match := d.new(t, "plugin.RepositoryResponse")
	call(methodMatchRepository, match)
	if !field(match, "isSupported").Bool() || !field(match, "isDiscoveryEnabled").Bool() {
		t.Errorf("MatchRepository = %v, want supported, discovery enabled", match)
	}
	resp := d.new(t, "plugin.ManifestResponse")
	call(methodGenerateManifest, resp)
	var got []string
	list := field(resp, "manifests").List()
	for i := range list.Len() {
		got = append(got, list.Get(i).String())
	}
	if diff := cmp.Diff([]string{`{"kind":"ConfigMap"}`, `"guestbook"`}, got); diff != "" {
		t.Errorf("manifests (-want +got):\n%s", diff)
	}
}
