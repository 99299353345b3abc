package cmp

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"google.golang.org/grpc"
)

// chunkSize is the size of the archive's chunks on the stream. Argo CD's
// repo-server sends 1 KiB chunks by default (ARGOCD_CMP_CHUNK_SIZE);
// argocd-cmp-server takes any size up to its 100 MiB message limit.
const chunkSize = 64 << 10

// maxLinkHops bounds the symlinks followed resolving one link, as the
// kernel's ELOOP does.
const maxLinkHops = 40

// errArchiveTooLarge is an archive over its limit.
var errArchiveTooLarge = errors.New("archive too large")

// archive is a source's repository as a tgz in a temporary file, built
// once and streamed to every plugin asked about the source.
type archive struct {
	file       *os.File
	size       int64
	checksum   string // sha256, hex
	appName    string
	appRelPath string
	env        []envEntry
}

// newArchive archives src.Root but .git (at any depth) into a temporary
// file of at most maxBytes, as Argo CD's repo-server does: directories,
// regular files and symlinks (as symlinks, never followed), nothing else.
// Every read goes through an os.Root, so nothing outside Root is read
// even if the checkout changes meanwhile, and a symlink that resolves
// outside Root (absolute, or through ..) fails the archive as Argo CD
// fails a repository with one.
func newArchive(ctx context.Context, src Source, maxBytes int64) (_ *archive, err error) {
	rel, err := appRelPath(src.Path)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(src.Root)
	if err != nil {
		return nil, fmt.Errorf("open repository: %w", err)
	}
	defer root.Close()
	switch fi, err := root.Stat(rel); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: app path does not exist", src.Path)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", src.Path, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("%s: app path is not a directory", src.Path)
	}

	f, err := os.CreateTemp("", "tollgate-cmp-*.tgz")
	if err != nil {
		return nil, fmt.Errorf("create archive: %w", err)
	}
	a := &archive{file: f, appRelPath: rel, env: envEntries(src.Env)}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	// Argo CD sends the base name of the source's directory as appName.
	a.appName = filepath.Base(filepath.Join(src.Root, rel))

	hash := sha256.New()
	out := &limitedWriter{w: io.MultiWriter(f, hash), n: maxBytes}
	gz := gzip.NewWriter(out)
	tw := tar.NewWriter(gz)
	files, err := writeTree(ctx, root, tw)
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	switch {
	case errors.Is(err, errArchiveTooLarge):
		return nil, fmt.Errorf("archive %s: larger than %d bytes", src.Root, maxBytes)
	case err != nil:
		return nil, fmt.Errorf("archive %s: %w", src.Root, err)
	case files == 0:
		return nil, fmt.Errorf("no files to send(%s)", src.Root)
	}
	a.size, a.checksum = maxBytes-out.n, hex.EncodeToString(hash.Sum(nil))
	return a, nil
}

// appRelPath is a source's path relative to the repository root, "." for
// the root; it may not be absolute or leave the root.
func appRelPath(p string) (string, error) {
	if filepath.IsAbs(p) {
		return "", fmt.Errorf("%s: app path is absolute", p)
	}
	rel := filepath.Clean(p)
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s: app path outside root", p)
	}
	return rel, nil
}

// writeTree writes root's tree to tw and returns how many regular files
// it wrote.
func writeTree(ctx context.Context, root *os.Root, tw *tar.Writer) (int, error) {
	files := 0
	err := fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if name == "." {
			return nil
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: int64(fi.Mode().Perm()), ModTime: fi.ModTime()})
		case d.Type()&fs.ModeSymlink != 0:
			target, err := root.Readlink(name)
			if err != nil {
				return err
			}
			if checkLink(root, name) != nil {
				return fmt.Errorf("repository contains out-of-bounds symlinks. file: %s", name)
			}
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777})
		case d.Type().IsRegular():
			files++
			return writeFile(root, name, tw)
		}
		return nil // devices, pipes and sockets are left out, as in Argo CD
	})
	return files, err
}

// writeFile writes the regular file name of root to tw.
func writeFile(root *os.Root, name string, tw *tar.Writer) error {
	f, err := root.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: changed while archiving", name)
	}
	h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: fi.Size(), Mode: int64(fi.Mode().Perm()), ModTime: fi.ModTime()}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	n, err := io.Copy(tw, io.LimitReader(f, h.Size))
	if err == nil && n != h.Size {
		err = fmt.Errorf("%s: changed while archiving", name)
	}
	return err
}

// send streams the archive on s: the metadata, then the tgz in chunks.
// It stops quietly when the server has ended the stream (its status is
// what RecvMsg then returns).
func (a *archive) send(ctx context.Context, s grpc.ClientStream) error {
	md := &appStreamRequest{Metadata: &manifestRequestMetadata{
		AppName: a.appName, AppRelPath: a.appRelPath, Checksum: a.checksum, Size: a.size, Env: a.env,
	}}
	if err := s.SendMsg(md); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("error sending generate manifest metadata to cmp-server: %w", err)
	}
	r := io.NewSectionReader(a.file, 0, a.size)
	buf := make([]byte, chunkSize)
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("error sending tgz file to cmp-server: %w", err)
		}
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			if err := s.SendMsg(&appStreamRequest{File: &file{Chunk: buf[:n]}}); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return fmt.Errorf("error sending tgz file to cmp-server: %w", err)
			}
		}
		if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
			break
		}
		if rerr != nil {
			return fmt.Errorf("error sending tgz file to cmp-server: %w", rerr)
		}
	}
	return s.CloseSend()
}

// Close removes the archive's file.
func (a *archive) Close() error {
	a.file.Close()
	return os.Remove(a.file.Name())
}

// limitedWriter writes at most n bytes to w, then fails.
type limitedWriter struct {
	w io.Writer
	n int64
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, errArchiveTooLarge
	}
	n, err := l.w.Write(p)
	l.n -= int64(n)
	return n, err
}

// limitedReader reads at most n bytes from r, then fails (where
// io.LimitReader would end quietly).
type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errArchiveTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// checkLink resolves the symlink name in root component by component,
// following the symlinks it meets as the kernel would, and fails if that
// ever leaves root: an absolute target, or a .. above root. A component
// that does not exist is taken as a directory, so a link that dangles now
// cannot leave root once a plugin creates what it points through.
// name's parent directories are real directories (a walk found it).
func checkLink(root *os.Root, name string) error {
	name = filepath.ToSlash(name)
	target, err := root.Readlink(name)
	if err != nil {
		return err
	}
	resolved := splitPath(path.Dir(name))
	hops := 0
	var pending []string
	for {
		if path.IsAbs(target) {
			return fmt.Errorf("%s: absolute link target", name)
		}
		// The target resolves from the directory holding the link, then
		// the components after the link.
		pending = append(splitPath(target), pending...)
		link := false
		for len(pending) > 0 && !link {
			c := pending[0]
			pending = pending[1:]
			if c == ".." {
				if len(resolved) == 0 {
					return fmt.Errorf("%s: link leaves the directory", name)
				}
				resolved = resolved[:len(resolved)-1]
				continue
			}
			next := append(resolved[:len(resolved):len(resolved)], c)
			fi, err := root.Lstat(path.Join(next...))
			if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				resolved = next
				continue
			}
			if hops++; hops > maxLinkHops {
				return fmt.Errorf("%s: too many levels of symbolic links", name)
			}
			if target, err = root.Readlink(path.Join(next...)); err != nil {
				return err
			}
			link = true
		}
		if !link {
			return nil
		}
	}
}

// splitPath splits a slash path into its components, leaving out empty
// ones and ".".
func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}
