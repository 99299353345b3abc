package cmp

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
)

// socketDir is a directory for plugin sockets with a short path (a Unix
// socket's path is limited to about 100 bytes).
func socketDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cmp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// testServerOptions are DefaultServerOptions with a work directory of the
// test's own.
func testServerOptions(t *testing.T) ServerOptions {
	opts := DefaultServerOptions()
	opts.WorkDir = t.TempDir()
	return opts
}

// startPlugin serves the plugin.yaml y with opts in dir until the test
// ends and returns its socket's path.
func startPlugin(t *testing.T, dir, y string, opts ServerOptions) string {
	t.Helper()
	cfg, err := ParseConfig([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, cfg.SocketName())
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serve(t.Context(), srv, l) }()
	t.Cleanup(func() {
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return path
}

// makeRepo writes files (name: content; a content starting with "->" is
// a symlink to the rest) into a new directory.
func makeRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := bytes.CutPrefix([]byte(content), []byte("->")); ok {
			if err := os.Symlink(string(target), p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tarEntry is an entry of a hand-made archive.
type tarEntry struct {
	hdr  tar.Header
	body string
}

func regular(name, body string) tarEntry {
	return tarEntry{tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body))}, body}
}

func symlink(name, target string) tarEntry {
	return tarEntry{tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777}, ""}
}

// makeTgz builds a tgz of entries.
func makeTgz(t *testing.T, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		if err := tw.WriteHeader(&e.hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// metadataFor is the metadata a client sends before tgz.
func metadataFor(tgz []byte, appRelPath string) *manifestRequestMetadata {
	sum := sha256.Sum256(tgz)
	return &manifestRequestMetadata{AppName: "app", AppRelPath: appRelPath, Checksum: hex.EncodeToString(sum[:]), Size: int64(len(tgz))}
}

// chunks splits tgz into File requests of 1 KiB, as Argo CD sends them.
func chunks(tgz []byte) []*appStreamRequest {
	var out []*appStreamRequest
	for len(tgz) > 0 {
		n := min(len(tgz), 1024)
		out = append(out, &appStreamRequest{File: &file{Chunk: tgz[:n]}})
		tgz = tgz[n:]
	}
	return out
}

// callRaw sends reqs on a client stream of method at socket and receives
// the response into resp.
func callRaw(t *testing.T, socket, method string, resp message, reqs ...*appStreamRequest) error {
	t.Helper()
	p, err := dial(socket, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	s, err := p.conn.NewStream(t.Context(), &grpc.StreamDesc{ClientStreams: true}, method)
	if err != nil {
		return err
	}
	for _, r := range reqs {
		if err := s.SendMsg(r); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	return s.RecvMsg(resp)
}
