package cmp

import (
	"bytes"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/status"
)

// TestArchiveRoundTrip archives a tree and extracts it: .git is left out
// at every depth, symlinks stay symlinks, modes are kept only with
// preserveFileMode.
func TestArchiveRoundTrip(t *testing.T) {
	root := makeRepo(t, map[string]string{
		".git/config":           "[core]\n",
		"app/values.yaml":       "a: 1\n",
		"app/sub/.git":          "gitdir: ../../.git/modules/sub\n",
		"app/sub/deep/file.txt": "deep\n",
		"app/current":           "->sub",
		"app/sub/deep/up":       "->../../values.yaml",
		"app/sub/dangling":      "->not-yet/there",
		"empty/.keep":           "",
		"script.sh":             "#!/bin/sh\n",
	})
	if err := os.Chmod(filepath.Join(root, "script.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := newArchive(t.Context(), Source{Root: root, Path: "app/", Env: []string{"A=1", "B=x=y", "C"}}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if diff := cmp.Diff([]envEntry{{"A", "1"}, {"B", "x=y"}}, a.env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if a.appName != "app" || a.appRelPath != "app" {
		t.Errorf("appName, appRelPath = %q, %q; want app, app", a.appName, a.appRelPath)
	}
	for _, preserve := range []bool{false, true} {
		dst := t.TempDir()
		lim := receiveLimits{archiveBytes: 1 << 20, extractBytes: 1 << 20, entries: 100}
		if err := untgz(dst, fsReader(t, a), lim, preserve); err != nil {
			t.Fatal(err)
		}
		want := []string{
			"app/ d", "app/current -> sub", "app/sub/ d", "app/sub/dangling -> not-yet/there", "app/sub/deep/ d",
			"app/sub/deep/file.txt -rw-r--r--", "app/sub/deep/up -> ../../values.yaml", "app/values.yaml -rw-r--r--",
			"empty/ d", "empty/.keep -rw-r--r--", "script.sh -rw-r--r--",
		}
		if preserve {
			want[len(want)-1] = "script.sh -rwxr-xr-x"
		}
		if diff := cmp.Diff(want, listTree(t, dst)); diff != "" {
			t.Errorf("extracted (preserve %v) (-want +got):\n%s", preserve, diff)
		}
	}
}

func fsReader(t *testing.T, a *archive) *bytes.Reader {
	t.Helper()
	b := make([]byte, a.size)
	if _, err := a.file.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

// listTree lists dir: directories with a slash, links with their target,
// files with their mode.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch fi, _ := d.Info(); {
		case d.IsDir():
			out = append(out, rel+"/ d")
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out = append(out, rel+" -> "+target)
		default:
			out = append(out, rel+" "+fi.Mode().String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func TestCheckLink(t *testing.T) {
	root := makeRepo(t, map[string]string{
		"a/file":      "",
		"a/self":      "->.",
		"a/up":        "->..",
		"in":          "->a/file",
		"via-self":    "->a/self/../a/file",
		"trick":       "->a/self/../..",
		"trick2":      "->a/up/..",
		"abs":         "->/etc/passwd",
		"dangling":    "->missing/../../x",
		"dangling-ok": "->missing/../x",
		"loop1":       "->loop2",
		"loop2":       "->loop1",
		"b/c/deep":    "->../../a",
	})
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tests := map[string]string{ // name: error, "" for none
		"a/self":      "",
		"a/up":        "",
		"in":          "",
		"via-self":    "",
		"dangling-ok": "",
		"b/c/deep":    "",
		"trick":       "trick: link leaves the directory",
		"trick2":      "trick2: link leaves the directory",
		"abs":         "abs: absolute link target",
		"dangling":    "dangling: link leaves the directory",
		"loop1":       "loop1: too many levels of symbolic links",
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			err := checkLink(r, name)
			if got := errString(err); got != want {
				t.Errorf("checkLink(%s) = %q, want %q", name, got, want)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestServerRefusesHostileArchives sends archives no repo-server sends:
// the server refuses each before running anything, writes nothing
// outside the request's directory, and removes that.
func TestServerRefusesHostileArchives(t *testing.T) {
	sockets := socketDir(t)
	marker := filepath.Join(t.TempDir(), "ran")
	opts := testServerOptions(t)
	opts.Env = []string{"PATH=" + os.Getenv("PATH"), "MARKER=" + marker}
	opts.MaxArchiveBytes, opts.MaxExtractBytes, opts.MaxEntries = 8<<10, 64<<10, 16
	socket := startPlugin(t, sockets, `kind: ConfigManagementPlugin
metadata: {name: victim}
spec:
  generate: {command: [sh, -c, 'touch "$MARKER"; echo "{}"']}
`, opts)

	ok := makeTgz(t, regular("a", "fine"))
	var many []tarEntry
	for i := range 20 {
		many = append(many, regular(strings.Repeat("f", i+1), ""))
	}
	big := make([]byte, 16<<10) // incompressible
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(rnd.Uint32())
	}
	bigTgz := makeTgz(t, regular("big", string(big)))
	lying := metadataFor(bigTgz, ".")
	lying.Size = 100
	badSum := metadataFor(ok, ".")
	badSum.Checksum = strings.Repeat("0", 64)
	badSize := metadataFor(ok, ".")
	badSize.Size--
	const recv = "generate manifest error receiving stream: "
	tests := []struct {
		name string
		md   *manifestRequestMetadata
		tgz  []byte
		want string
	}{
		{"traversal", nil, makeTgz(t, regular("../evil", "x")), recv + `error decompressing tgz file: illegal filepath in archive: "../evil"`},
		{"nested traversal", nil, makeTgz(t, regular("a/../../evil", "x")), recv + `error decompressing tgz file: illegal filepath in archive: "a/../../evil"`},
		{"absolute", nil, makeTgz(t, regular("/tmp/evil", "x")), recv + `error decompressing tgz file: illegal filepath in archive: "/tmp/evil"`},
		{"symlink escape", nil, makeTgz(t, symlink("link", "../outside")), recv + "error decompressing tgz file: illegal filepath in symlink: link -> ../outside"},
		{"absolute symlink", nil, makeTgz(t, symlink("link", "/etc")), recv + "error decompressing tgz file: illegal filepath in symlink: link -> /etc"},
		{"symlink escape through a symlink", nil, makeTgz(t, symlink("a/b", "."), symlink("l", "a/b/../..")),
			recv + "error decompressing tgz file: illegal filepath in symlink: l: link leaves the directory"},
		{"symlink then a file through it", nil, makeTgz(t, symlink("d", "."), regular("d/../../evil", "x")),
			recv + `error decompressing tgz file: illegal filepath in archive: "d/../../evil"`},
		{"oversize", nil, bigTgz, recv + "error receiving tgz file: size " + strconv.Itoa(len(bigTgz)) + " is over the limit of 8192 bytes"},
		{"oversize with a lying size", lying, bigTgz, recv + "error receiving tgz file: archive is over the limit of 8192 bytes"},
		{"uncompressed oversize", nil, makeTgz(t, regular("zeros", strings.Repeat("\x00", 1<<20))),
			recv + "error decompressing tgz file: archive is over the limit of 65536 bytes uncompressed"},
		{"too many entries", nil, makeTgz(t, many...), recv + "error decompressing tgz file: archive has more than 16 entries"},
		{"bad checksum", badSum, ok, recv + "error receiving tgz file: file checksum validation error"},
		{"bad size", badSize, ok, recv + "error receiving tgz file: file size validation error: received " + strconv.Itoa(len(ok)) + " bytes, metadata says " + strconv.Itoa(len(ok)-1)},
		{"not gzip", nil, []byte("plain text"), recv + "error decompressing tgz file: error reading file: gzip: invalid header"},
		{"app path outside", metadataFor(ok, "../.."), ok, recv + "illegal appPath: out of workDir bound"},
		{"app path missing", metadataFor(ok, "nope"), ok, recv + "nope: app path does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			md := tc.md
			if md == nil {
				md = metadataFor(tc.tgz, ".")
			}
			reqs := append([]*appStreamRequest{{Metadata: md}}, chunks(tc.tgz)...)
			err := callRaw(t, socket, methodGenerateManifest, &manifestResponse{}, reqs...)
			if got := status.Convert(err).Message(); got != tc.want {
				t.Errorf("error = %v\nwant %s", err, tc.want)
			}
			if entries, err := os.ReadDir(opts.WorkDir); err != nil || len(entries) != 0 {
				t.Errorf("work dir after the request: %v, %v; want empty", entries, err)
			}
		})
	}
	t.Run("no metadata", func(t *testing.T) {
		err := callRaw(t, socket, methodGenerateManifest, &manifestResponse{}, chunks(ok)...)
		if got, want := status.Convert(err).Message(), recv+"error getting stream metadata: metadata is nil"; got != want {
			t.Errorf("error = %v, want %s", err, want)
		}
	})
	if _, err := os.Stat(marker); err == nil {
		t.Error("the plugin ran for a refused archive")
	}
	// Nothing escaped next to the work directory or the sockets.
	for _, dir := range []string{filepath.Dir(opts.WorkDir), sockets, os.TempDir()} {
		if _, err := os.Lstat(filepath.Join(dir, "evil")); err == nil {
			t.Errorf("%s/evil exists", dir)
		}
	}
	// And a fine archive is served.
	var resp manifestResponse
	reqs := append([]*appStreamRequest{{Metadata: metadataFor(ok, ".")}}, chunks(ok)...)
	if err := callRaw(t, socket, methodGenerateManifest, &resp, reqs...); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"{}"}, resp.Manifests); diff != "" {
		t.Errorf("manifests (-want +got):\n%s", diff)
	}
}
