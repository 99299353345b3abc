package cmp

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
)

// The messages of Argo CD's cmpserver/plugin/plugin.proto (package plugin)
// and the one of reposerver/repository/repository.proto it refers to
// (repository.ParameterAnnouncement), written by hand: each appends its
// proto3 encoding (fields in number order, zero scalars left out, as
// protoc's generated code does) and decodes one, skipping unknown fields
// and fields of an unexpected wire type, and merging a repeated embedded
// message as protobuf does.

// message is what the codec encodes and decodes.
type message interface {
	appendTo(b []byte) []byte
	unmarshal(b []byte) error
}

// appStreamRequest is plugin.AppStreamRequest: a oneof of the metadata
// (sent first) and a chunk of the tgz archive.
type appStreamRequest struct {
	Metadata *manifestRequestMetadata // field 1
	File     *file                    // field 2
}

// manifestRequestMetadata is plugin.ManifestRequestMetadata.
type manifestRequestMetadata struct {
	AppName    string     // field 1
	AppRelPath string     // field 2
	Checksum   string     // field 3: sha256 of the tgz, hex
	Size       int64      // field 4: the tgz's size in bytes
	Env        []envEntry // field 5
}

// envEntry is plugin.EnvEntry.
type envEntry struct {
	Name  string // field 1
	Value string // field 2
}

// file is plugin.File.
type file struct {
	Chunk []byte // field 1
}

// manifestResponse is plugin.ManifestResponse.
type manifestResponse struct {
	Manifests  []string // field 1
	SourceType string   // field 2
}

// repositoryResponse is plugin.RepositoryResponse.
type repositoryResponse struct {
	IsSupported        bool // field 1
	IsDiscoveryEnabled bool // field 2
}

// parametersAnnouncementResponse is plugin.ParametersAnnouncementResponse.
type parametersAnnouncementResponse struct {
	ParameterAnnouncements []ParameterAnnouncement // field 1
}

// checkPluginConfigurationResponse is plugin.CheckPluginConfigurationResponse.
type checkPluginConfigurationResponse struct {
	IsDiscoveryConfigured bool // field 1
	ProvideGitCreds       bool // field 2
}

// empty is google.protobuf.Empty.
type empty struct{}

// ParameterAnnouncement is Argo CD's repository.ParameterAnnouncement: a
// parameter a plugin accepts, as plugin.yaml's spec.parameters.static
// lists it and a dynamic parameters command prints it (JSON), and as the
// plugin announces it over the wire (field numbers in the comments).
type ParameterAnnouncement struct {
	// Name identifies the parameter (field 1).
	Name string `json:"name,omitempty"`
	// Title is a human-readable name (field 2).
	Title string `json:"title,omitempty"`
	// Tooltip is a human-readable description (field 3).
	Tooltip string `json:"tooltip,omitempty"`
	// Required says the parameter is mandatory (field 4).
	Required bool `json:"required,omitempty"`
	// ItemType is the primitive type the values stand for (field 5).
	ItemType string `json:"itemType,omitempty"`
	// CollectionType is string (the default), array or map (field 6).
	CollectionType string `json:"collectionType,omitempty"`
	// String is the default of a string parameter (field 7).
	String string `json:"string,omitempty"`
	// Array is the default of an array parameter (field 8).
	Array []string `json:"array,omitempty"`
	// Map is the default of a map parameter (field 9).
	Map map[string]string `json:"map,omitempty"`
}

// Appending.

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBool(b []byte, num protowire.Number, v bool) []byte {
	if !v {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, 1)
}

// appendMessage appends m as the embedded message field num, even when m
// encodes to nothing (a set oneof or a repeated element is always sent).
func appendMessage(b []byte, num protowire.Number, m message) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, m.appendTo(nil))
}

func (m *appStreamRequest) appendTo(b []byte) []byte {
	switch {
	case m.Metadata != nil:
		b = appendMessage(b, 1, m.Metadata)
	case m.File != nil:
		b = appendMessage(b, 2, m.File)
	}
	return b
}

func (m *manifestRequestMetadata) appendTo(b []byte) []byte {
	b = appendString(b, 1, m.AppName)
	b = appendString(b, 2, m.AppRelPath)
	b = appendString(b, 3, m.Checksum)
	if m.Size != 0 {
		b = protowire.AppendTag(b, 4, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(m.Size))
	}
	for i := range m.Env {
		b = appendMessage(b, 5, &m.Env[i])
	}
	return b
}

func (m *envEntry) appendTo(b []byte) []byte {
	b = appendString(b, 1, m.Name)
	return appendString(b, 2, m.Value)
}

func (m *file) appendTo(b []byte) []byte {
	if len(m.Chunk) == 0 {
		return b
	}
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	return protowire.AppendBytes(b, m.Chunk)
}

func (m *manifestResponse) appendTo(b []byte) []byte {
	for _, s := range m.Manifests {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	return appendString(b, 2, m.SourceType)
}

func (m *repositoryResponse) appendTo(b []byte) []byte {
	b = appendBool(b, 1, m.IsSupported)
	return appendBool(b, 2, m.IsDiscoveryEnabled)
}

func (m *parametersAnnouncementResponse) appendTo(b []byte) []byte {
	for i := range m.ParameterAnnouncements {
		b = appendMessage(b, 1, &m.ParameterAnnouncements[i])
	}
	return b
}

func (m *checkPluginConfigurationResponse) appendTo(b []byte) []byte {
	b = appendBool(b, 1, m.IsDiscoveryConfigured)
	return appendBool(b, 2, m.ProvideGitCreds)
}

func (*empty) appendTo(b []byte) []byte { return b }

func (m *ParameterAnnouncement) appendTo(b []byte) []byte {
	b = appendString(b, 1, m.Name)
	b = appendString(b, 2, m.Title)
	b = appendString(b, 3, m.Tooltip)
	b = appendBool(b, 4, m.Required)
	b = appendString(b, 5, m.ItemType)
	b = appendString(b, 6, m.CollectionType)
	b = appendString(b, 7, m.String)
	for _, s := range m.Array {
		b = protowire.AppendTag(b, 8, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	// A map field is a repeated entry message {key = 1, value = 2}; keys
	// in order so the encoding is deterministic.
	for _, k := range slices.Sorted(maps.Keys(m.Map)) {
		var e []byte
		e = protowire.AppendTag(e, 1, protowire.BytesType)
		e = protowire.AppendString(e, k)
		e = protowire.AppendTag(e, 2, protowire.BytesType)
		e = protowire.AppendString(e, m.Map[k])
		b = protowire.AppendTag(b, 9, protowire.BytesType)
		b = protowire.AppendBytes(b, e)
	}
	return b
}

// Decoding.

// errWireType is a known field's unexpected wire type: the field is
// skipped as an unknown one, as protobuf does.
var errWireType = errors.New("unexpected wire type")

// fieldFunc decodes the field num of wire type typ whose value starts b.
// It returns how many bytes it consumed, or errWireType to skip the field,
// or 0 and nil when the field is unknown.
type fieldFunc func(num protowire.Number, typ protowire.Type, b []byte) (int, error)

// decodeFields walks the fields of a message, calling f for each.
func decodeFields(b []byte, f fieldFunc) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		m, err := f(num, typ, b)
		switch {
		case errors.Is(err, errWireType):
			m = 0
		case err != nil:
			return fmt.Errorf("field %d: %w", num, err)
		}
		if m == 0 {
			m = protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return fmt.Errorf("field %d: %w", num, protowire.ParseError(m))
			}
		}
		b = b[m:]
	}
	return nil
}

// consumeBytes returns a length-delimited value.
func consumeBytes(typ protowire.Type, b []byte) ([]byte, int, error) {
	if typ != protowire.BytesType {
		return nil, 0, errWireType
	}
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return nil, 0, protowire.ParseError(n)
	}
	return v, n, nil
}

func consumeString(typ protowire.Type, b []byte, dst *string) (int, error) {
	v, n, err := consumeBytes(typ, b)
	if err == nil {
		*dst = string(v)
	}
	return n, err
}

func consumeVarint(typ protowire.Type, b []byte) (uint64, int, error) {
	if typ != protowire.VarintType {
		return 0, 0, errWireType
	}
	v, n := protowire.ConsumeVarint(b)
	if n < 0 {
		return 0, 0, protowire.ParseError(n)
	}
	return v, n, nil
}

func consumeBool(typ protowire.Type, b []byte, dst *bool) (int, error) {
	v, n, err := consumeVarint(typ, b)
	if err == nil {
		*dst = protowire.DecodeBool(v)
	}
	return n, err
}

// consumeMessage decodes an embedded message into m, merging into what m
// already holds.
func consumeMessage(typ protowire.Type, b []byte, m message) (int, error) {
	v, n, err := consumeBytes(typ, b)
	if err != nil {
		return n, err
	}
	return n, m.unmarshal(v)
}

func (m *appStreamRequest) unmarshal(b []byte) error {
	return decodeFields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			md := m.Metadata
			if md == nil {
				md = &manifestRequestMetadata{}
			}
			n, err := consumeMessage(typ, b, md)
			if err == nil {
				m.Metadata, m.File = md, nil
			}
			return n, err
		case 2:
			f := m.File
			if f == nil {
				f = &file{}
			}
			n, err := consumeMessage(typ, b, f)
			if err == nil {
				m.Metadata, m.File = nil, f
			}
			return n, err
		}
		return 0, nil
	})
}

func (m *manifestRequestMetadata) unmarshal(b []byte) error {
	return decodeFields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return consumeString(typ, b, &m.AppName)
		case 2:
			return consumeString(typ, b, &m.AppRelPath)
		case 3:
			return consumeString(typ, b, &m.Checksum)
		case 4:
			v, n, err := consumeVarint(typ, b)
			if err == nil {
				m.Size = int64(v)
			}
			return n, err
		case 5:
			var e envEntry
			n, err := consumeMessage(typ, b, &e)
			if err == nil {
				m.Env = append(m.Env, e)
			}
			return n, err
		}
		return 0, nil
	})
}

func (m *envEntry) unmarshal(b []byte) error {
	return decodeFields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return consumeString(typ, b, &m.Name)
		case 2:
			return consumeString(typ, b, &m.Value)
		}
		return 0, nil
	})
}

func (m *file) unmarshal(b []byte) error {
	return decodeFields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		if num != 1 {
			return 0, nil
		}
		v, n, err := consumeBytes(typ, b)
		if err == nil {
			m.Chunk = append(m.Chunk[:0:0], v...)
		}
		return n, err
	})
}

func (m *manifestResponse) unmarshal(b []byte) error {
	return decodeFields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			var s string
			n, err := consumeString(typ, b, &s)
			if err == nil {
				m.Manifests = append(m.Manifests, s)
			}
			return n, err
		case 2:
			return consumeString(typ, b, &m.SourceType)
		}
		return 0, nil
	})
}

func (m *repositoryResponse) unmarshal(b []byte) error {
	return decodeFields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return consumeBool(typ, b, &m.IsSupported)
		case 2:
			return consumeBool(typ, b, &m.IsDiscoveryEnabled)
		}
		return 0, nil
	})
}

func (m *parametersAnnouncementResponse) unmarshal(b []byte) error {
	return decodeFields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		if num != 1 {
			return 0, nil
		}
		var p ParameterAnnouncement
		n, err := consumeMessage(typ, b, &p)
		if err == nil {
			m.ParameterAnnouncements = append(m.ParameterAnnouncements, p)
		}
		return n, err
	})
}

func (m *checkPluginConfigurationResponse) unmarshal(b []byte) error {
	return decodeFields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return consumeBool(typ, b, &m.IsDiscoveryConfigured)
		case 2:
			return consumeBool(typ, b, &m.ProvideGitCreds)
		}
		return 0, nil
	})
}

func (*empty) unmarshal(b []byte) error {
	return decodeFields(b, func(protowire.Number, protowire.Type, []byte) (int, error) { return 0, nil })
}

func (m *ParameterAnnouncement) unmarshal(b []byte) error {
	return decodeFields(b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return consumeString(typ, b, &m.Name)
		case 2:
			return consumeString(typ, b, &m.Title)
		case 3:
			return consumeString(typ, b, &m.Tooltip)
		case 4:
			return consumeBool(typ, b, &m.Required)
		case 5:
			return consumeString(typ, b, &m.ItemType)
		case 6:
			return consumeString(typ, b, &m.CollectionType)
		case 7:
			return consumeString(typ, b, &m.String)
		case 8:
			var s string
			n, err := consumeString(typ, b, &s)
			if err == nil {
				m.Array = append(m.Array, s)
			}
			return n, err
		case 9:
			v, n, err := consumeBytes(typ, b)
			if err != nil {
				return n, err
			}
			var e envEntry // a map entry has the shape of an EnvEntry: key 1, value 2
			if err := e.unmarshal(v); err != nil {
				return n, err
			}
			if m.Map == nil {
				m.Map = map[string]string{}
			}
			m.Map[e.Name] = e.Value
			return n, nil
		}
		return 0, nil
	})
}

// codec encodes the messages above for gRPC. It is named "proto", so the
// content-subtype on the wire is Argo CD's (application/grpc+proto), and
// is forced on both ends (grpc.ForceCodecV2, grpc.ForceServerCodecV2): it
// is never registered globally, where it would replace gRPC's own.
type codec struct{}

var _ encoding.CodecV2 = codec{}

func (codec) Name() string { return "proto" }

func (codec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(message)
	if !ok {
		return nil, fmt.Errorf("marshal %T: not a config management plugin message", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(m.appendTo(nil))}, nil
}

func (codec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(message)
	if !ok {
		return fmt.Errorf("unmarshal %T: not a config management plugin message", v)
	}
	// Materialize copies, so what m keeps does not alias gRPC's buffers.
	return m.unmarshal(data.Materialize())
}
