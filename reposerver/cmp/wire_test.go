package cmp

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// wireCases are one of each message, with every field set, or a few.
func wireCases() []struct {
	name  string // the message's full proto name
	msg   message
	fresh func() message
} {
	return []struct {
		name  string
		msg   message
		fresh func() message
	}{
		{"plugin.AppStreamRequest", &appStreamRequest{Metadata: &manifestRequestMetadata{
			AppName: "guestbook", AppRelPath: "apps/guestbook", Checksum: "abc123", Size: 1 << 40,
			Env: []envEntry{{Name: "ARGOCD_APP_NAME", Value: "guestbook"}, {Name: "EMPTY"}, {Name: "PARAM_X", Value: "é=1"}},
		}}, func() message { return &appStreamRequest{} }},
		{"plugin.AppStreamRequest", &appStreamRequest{File: &file{Chunk: []byte{0, 1, 2, 0xff}}}, func() message { return &appStreamRequest{} }},
		{"plugin.AppStreamRequest", &appStreamRequest{Metadata: &manifestRequestMetadata{}}, func() message { return &appStreamRequest{} }},
		{"plugin.ManifestRequestMetadata", &manifestRequestMetadata{Size: -1}, func() message { return &manifestRequestMetadata{} }},
		{"plugin.EnvEntry", &envEntry{Name: "A", Value: "b"}, func() message { return &envEntry{} }},
		{"plugin.ManifestResponse", &manifestResponse{Manifests: []string{`{"kind":"ConfigMap"}`, "", "kind: Secret\n"}, SourceType: "Plugin"}, func() message { return &manifestResponse{} }},
		{"plugin.RepositoryResponse", &repositoryResponse{IsSupported: true, IsDiscoveryEnabled: true}, func() message { return &repositoryResponse{} }},
		{"plugin.RepositoryResponse", &repositoryResponse{IsDiscoveryEnabled: true}, func() message { return &repositoryResponse{} }},
		{"plugin.ParametersAnnouncementResponse", &parametersAnnouncementResponse{ParameterAnnouncements: []ParameterAnnouncement{
			{Name: "values", Title: "Values", Tooltip: "Helm values", Required: true, ItemType: "string", CollectionType: "map",
				String: "s", Array: []string{"a", "", "c"}, Map: map[string]string{"b": "2", "a": "1", "": "empty"}},
			{},
			{Name: "only-name"},
		}}, func() message { return &parametersAnnouncementResponse{} }},
		{"plugin.File", &file{Chunk: []byte("chunk")}, func() message { return &file{} }},
		{"plugin.CheckPluginConfigurationResponse", &checkPluginConfigurationResponse{IsDiscoveryConfigured: true, ProvideGitCreds: true}, func() message { return &checkPluginConfigurationResponse{} }},
		{"google.protobuf.Empty", &empty{}, func() message { return &empty{} }},
	}
}

func TestWireRoundTrip(t *testing.T) {
	for _, tc := range wireCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.fresh()
			if err := got.unmarshal(tc.msg.appendTo(nil)); err != nil {
				t.Fatalf("unmarshal: %v", err)
			}
			if diff := cmp.Diff(normalize(tc.msg), normalize(got)); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// normalize makes nil and empty slices and maps compare equal, as they
// encode the same.
func normalize(m message) message {
	switch v := m.(type) {
	case *manifestRequestMetadata:
		c := *v
		if len(c.Env) == 0 {
			c.Env = nil
		}
		return &c
	case *appStreamRequest:
		c := *v
		if c.Metadata != nil {
			c.Metadata = normalize(c.Metadata).(*manifestRequestMetadata)
		}
		if c.File != nil && len(c.File.Chunk) == 0 {
			c.File = &file{}
		}
		return &c
	case *parametersAnnouncementResponse:
		c := &parametersAnnouncementResponse{}
		for _, p := range v.ParameterAnnouncements {
			if len(p.Array) == 0 {
				p.Array = nil
			}
			if len(p.Map) == 0 {
				p.Map = nil
			}
			c.ParameterAnnouncements = append(c.ParameterAnnouncements, p)
		}
		return c
	}
	return m
}

// TestWireBytes checks encodings worked out by hand from plugin.proto's
// and repository.proto's field numbers.
func TestWireBytes(t *testing.T) {
	tests := []struct {
		name string
		msg  message
		want string // hex
	}{
		{"metadata appName", &appStreamRequest{Metadata: &manifestRequestMetadata{AppName: "a"}}, "0a030a0161"},
		{"empty metadata is still set", &appStreamRequest{Metadata: &manifestRequestMetadata{}}, "0a00"},
		{"file chunk", &appStreamRequest{File: &file{Chunk: []byte("hi")}}, "12040a026869"},
		{"metadata appRelPath checksum", &manifestRequestMetadata{AppRelPath: ".", Checksum: "c"}, "12012e1a0163"},
		{"metadata size", &manifestRequestMetadata{Size: 300}, "20ac02"},
		{"metadata env", &manifestRequestMetadata{Env: []envEntry{{Name: "A", Value: "b"}}}, "2a060a014112016" + "2"},
		{"manifests and source type", &manifestResponse{Manifests: []string{"x", ""}, SourceType: "P"}, "0a01780a00120150"},
		{"repository response", &repositoryResponse{IsSupported: true, IsDiscoveryEnabled: true}, "08011001"},
		{"repository response false", &repositoryResponse{}, ""},
		{"plugin configuration", &checkPluginConfigurationResponse{ProvideGitCreds: true}, "1001"},
		{"parameter announcement", &parametersAnnouncementResponse{ParameterAnnouncements: []ParameterAnnouncement{
			{Name: "n", Required: true, Map: map[string]string{"k": "v"}},
		}}, "0a0d0a016e20014a060a016b120176"},
		{"parameter array and strings", &ParameterAnnouncement{Title: "t", Tooltip: "h", ItemType: "i", CollectionType: "array", String: "s", Array: []string{"a"}},
			"1201741a01682a0169320561727261793a017342016" + "1"},
		{"empty", &empty{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := hex.EncodeToString(tc.msg.appendTo(nil)); got != tc.want {
				t.Errorf("encoding = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestWireDecodeSkipsUnknownAndMerges(t *testing.T) {
	// metadata{appName:"a"}, an unknown varint field 15, a fixed64 field
	// 16, then metadata{appRelPath:"p"} merged into the first, and
	// appName given as a varint (wrong wire type: skipped).
	b, _ := hex.DecodeString("0a030a0161" + "7805" + "81010102030405060708" + "0a03120170" + "0a020801")
	var got appStreamRequest
	if err := got.unmarshal(b); err != nil {
		t.Fatal(err)
	}
	want := appStreamRequest{Metadata: &manifestRequestMetadata{AppName: "a", AppRelPath: "p"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decode (-want +got):\n%s", diff)
	}
	// The oneof's last member wins.
	b, _ = hex.DecodeString("0a030a0161" + "12030a0178")
	got = appStreamRequest{}
	if err := got.unmarshal(b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(appStreamRequest{File: &file{Chunk: []byte("x")}}, got); diff != "" {
		t.Errorf("oneof (-want +got):\n%s", diff)
	}
}

func TestWireDecodeErrors(t *testing.T) {
	for name, h := range map[string]string{
		"truncated length": "0a05",
		"truncated varint": "2080",
		"bad tag":          "00",
		"nested truncated": "0a020a05",
	} {
		t.Run(name, func(t *testing.T) {
			b, _ := hex.DecodeString(h)
			var m appStreamRequest
			if err := m.unmarshal(b); err == nil {
				t.Errorf("unmarshal(%s) = nil error, want one", h)
			}
		})
	}
}

// TestWireMatchesProtobuf checks every case against the protobuf runtime,
// given descriptors written from plugin.proto and repository.proto: our
// bytes decode there into the same message, which the runtime encodes
// (deterministically) into the same bytes, and its bytes decode here.
func TestWireMatchesProtobuf(t *testing.T) {
	files := pluginDescriptors(t)
	for _, tc := range wireCases() {
		t.Run(tc.name, func(t *testing.T) {
			d, err := files.FindDescriptorByName(protoreflect.FullName(tc.name))
			if err != nil {
				t.Fatal(err)
			}
			dyn := dynamicpb.NewMessage(d.(protoreflect.MessageDescriptor))
			ours := tc.msg.appendTo(nil)
			if err := proto.Unmarshal(ours, dyn); err != nil {
				t.Fatalf("protobuf cannot decode our bytes: %v", err)
			}
			if n := len(dyn.GetUnknown()); n > 0 {
				t.Errorf("protobuf found %d bytes of unknown fields in ours", n)
			}
			theirs, err := proto.MarshalOptions{Deterministic: true}.Marshal(dyn)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ours, theirs) {
				t.Errorf("encoding differs:\n ours   %x\n theirs %x", ours, theirs)
			}
			got := tc.fresh()
			if err := got.unmarshal(theirs); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(normalize(tc.msg), normalize(got)); diff != "" {
				t.Errorf("decoding protobuf's bytes (-want +got):\n%s", diff)
			}
		})
	}
}

// pluginDescriptors are plugin.proto's messages and repository.proto's
// ParameterAnnouncement, and google.protobuf.Empty, as descriptors.
func pluginDescriptors(t *testing.T) interface {
	FindDescriptorByName(protoreflect.FullName) (protoreflect.Descriptor, error)
} {
	t.Helper()
	str, boolean, i64, bts, msg := descriptorpb.FieldDescriptorProto_TYPE_STRING, descriptorpb.FieldDescriptorProto_TYPE_BOOL,
		descriptorpb.FieldDescriptorProto_TYPE_INT64, descriptorpb.FieldDescriptorProto_TYPE_BYTES, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
	opt, rep := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL, descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	field := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label, typeName string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), JsonName: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(), Label: label.Enum()}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	message := func(name string, fields ...*descriptorpb.FieldDescriptorProto) *descriptorpb.DescriptorProto {
		return &descriptorpb.DescriptorProto{Name: proto.String(name), Field: fields}
	}
	mapEntry := message("MapEntry", field("key", 1, str, opt, ""), field("value", 2, str, opt, ""))
	mapEntry.Options = &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)}
	announcement := message("ParameterAnnouncement",
		field("name", 1, str, opt, ""), field("title", 2, str, opt, ""), field("tooltip", 3, str, opt, ""),
		field("required", 4, boolean, opt, ""), field("itemType", 5, str, opt, ""), field("collectionType", 6, str, opt, ""),
		field("string", 7, str, opt, ""), field("array", 8, str, rep, ""), field("map", 9, msg, rep, ".repository.ParameterAnnouncement.MapEntry"))
	announcement.NestedType = []*descriptorpb.DescriptorProto{mapEntry}
	repository := &descriptorpb.FileDescriptorProto{
		Name: proto.String("reposerver/repository/repository.proto"), Package: proto.String("repository"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{announcement},
	}
	emptyFile := &descriptorpb.FileDescriptorProto{
		Name: proto.String("google/protobuf/empty.proto"), Package: proto.String("google.protobuf"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{message("Empty")},
	}
	metadata, fileField := field("metadata", 1, msg, opt, ".plugin.ManifestRequestMetadata"), field("file", 2, msg, opt, ".plugin.File")
	metadata.OneofIndex, fileField.OneofIndex = proto.Int32(0), proto.Int32(0)
	request := message("AppStreamRequest", metadata, fileField)
	request.OneofDecl = []*descriptorpb.OneofDescriptorProto{{Name: proto.String("request")}}
	plugin := &descriptorpb.FileDescriptorProto{
		Name: proto.String("cmpserver/plugin/plugin.proto"), Package: proto.String("plugin"), Syntax: proto.String("proto3"),
		Dependency: []string{"reposerver/repository/repository.proto", "google/protobuf/empty.proto"},
		MessageType: []*descriptorpb.DescriptorProto{
			request,
			message("ManifestRequestMetadata", field("appName", 1, str, opt, ""), field("appRelPath", 2, str, opt, ""),
				field("checksum", 3, str, opt, ""), field("size", 4, i64, opt, ""), field("env", 5, msg, rep, ".plugin.EnvEntry")),
			message("EnvEntry", field("name", 1, str, opt, ""), field("value", 2, str, opt, "")),
			message("ManifestResponse", field("manifests", 1, str, rep, ""), field("sourceType", 2, str, opt, "")),
			message("RepositoryResponse", field("isSupported", 1, boolean, opt, ""), field("isDiscoveryEnabled", 2, boolean, opt, "")),
			message("ParametersAnnouncementResponse", field("parameterAnnouncements", 1, msg, rep, ".repository.ParameterAnnouncement")),
			message("File", field("chunk", 1, bts, opt, "")),
			message("CheckPluginConfigurationResponse", field("isDiscoveryConfigured", 1, boolean, opt, ""), field("provideGitCreds", 2, boolean, opt, "")),
		},
	}
	files, err := protodesc.NewFiles(&descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{repository, emptyFile, plugin}})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// FuzzAppStreamRequest decodes what a client sends the server: never a
// panic, and what decodes encodes to bytes that decode the same.
func FuzzAppStreamRequest(f *testing.F) {
	for _, tc := range wireCases() {
		f.Add(tc.msg.appendTo(nil))
	}
	f.Add([]byte{0x0a, 0x03, 0x0a, 0x01, 0x61})
	f.Fuzz(func(t *testing.T, b []byte) {
		var m appStreamRequest
		if m.unmarshal(b) != nil {
			return
		}
		var again appStreamRequest
		if err := again.unmarshal(m.appendTo(nil)); err != nil {
			t.Fatalf("re-decoding our encoding: %v", err)
		}
		if diff := cmp.Diff(normalize(&m), normalize(&again)); diff != "" {
			t.Errorf("re-decoding (-first +second):\n%s", diff)
		}
	})
}
