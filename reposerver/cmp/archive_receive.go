package cmp

import (
	"archive/tar"
	"compress/gzip"
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

// receiveLimits bound what the server receives and extracts.
type receiveLimits struct {
	archiveBytes int64 // the tgz
	extractBytes int64 // the tar stream inside it
	entries      int   // the archive's entries
}

// receive reads a request's stream into dir: the metadata, then the tgz
// (at most lim.archiveBytes, matching the metadata's sha256 checksum and
// size), extracted into dir/repo. It returns the metadata and the
// extraction directory.
func receive(s grpc.ServerStream, dir string, lim receiveLimits, preserveMode bool) (*manifestRequestMetadata, string, error) {
	var head appStreamRequest
	if err := s.RecvMsg(&head); err != nil {
		return nil, "", fmt.Errorf("error receiving stream header: %w", err)
	}
	md := head.Metadata
	if md == nil {
		return nil, "", errors.New("error getting stream metadata: metadata is nil")
	}
	if md.Size < 0 || md.Size > lim.archiveBytes {
		return nil, "", fmt.Errorf("error receiving tgz file: size %d is over the limit of %d bytes", md.Size, lim.archiveBytes)
	}
	tgz := filepath.Join(dir, "repo.tgz")
	if err := receiveFile(s, tgz, md, lim.archiveBytes); err != nil {
		return nil, "", fmt.Errorf("error receiving tgz file: %w", err)
	}
	repo := filepath.Join(dir, "repo")
	if err := os.Mkdir(repo, 0o700); err != nil {
		return nil, "", err
	}
	f, err := os.Open(tgz)
	if err != nil {
		return nil, "", err
	}
	err = untgz(repo, f, lim, preserveMode)
	f.Close()
	if err != nil {
		return nil, "", fmt.Errorf("error decompressing tgz file: %w", err)
	}
	if err := os.Remove(tgz); err != nil {
		return nil, "", err
	}
	return md, repo, nil
}

// receiveFile writes the stream's chunks to name, at most limit bytes,
// and checks them against md.
func receiveFile(s grpc.ServerStream, name string, md *manifestRequestMetadata, limit int64) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	hash := sha256.New()
	var size int64
	for {
		var req appStreamRequest
		err := s.RecvMsg(&req)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("stream Recv error: %w", err)
		}
		if req.File == nil {
			return errors.New("stream request file is nil")
		}
		if size += int64(len(req.File.Chunk)); size > limit {
			return fmt.Errorf("archive is over the limit of %d bytes", limit)
		}
		if _, err := f.Write(req.File.Chunk); err != nil {
			return fmt.Errorf("error writing file: %w", err)
		}
		hash.Write(req.File.Chunk)
	}
	if hex.EncodeToString(hash.Sum(nil)) != md.Checksum {
		return errors.New("file checksum validation error")
	}
	if size != md.Size {
		return fmt.Errorf("file size validation error: received %d bytes, metadata says %d", size, md.Size)
	}
	return f.Close()
}

// untgz extracts the tgz r into the directory dst, through an os.Root so
// no write leaves dst. It refuses entries with absolute names or ..
// components, symlinks that resolve outside dst, more than lim.entries
// entries and more than lim.extractBytes of tar stream; it extracts
// directories, regular files and symlinks and skips the rest, as Argo CD
// does. Modes are 0755 for directories and 0644 for files unless
// preserveMode (then the archive's permission bits, without setuid,
// setgid or sticky).
func untgz(dst string, r io.Reader, lim receiveLimits, preserveMode bool) error {
	root, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer root.Close()
	gz, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("error reading file: %w", err)
	}
	defer gz.Close()
	tr := tar.NewReader(&limitedReader{r: gz, n: lim.extractBytes})
	var links []string
	for entries := 0; ; entries++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errArchiveTooLarge) {
			return fmt.Errorf("archive is over the limit of %d bytes uncompressed", lim.extractBytes)
		}
		if err != nil {
			return fmt.Errorf("error while iterating on tar reader: %w", err)
		}
		if entries >= lim.entries {
			return fmt.Errorf("archive has more than %d entries", lim.entries)
		}
		name, err := entryName(h.Name)
		if err != nil {
			return err
		}
		if name == "." {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = root.MkdirAll(name, entryMode(h, preserveMode, 0o755))
		case tar.TypeSymlink:
			if err = checkLinkName(name, h.Linkname); err == nil {
				if err = root.MkdirAll(path.Dir(name), 0o755); err == nil {
					err = root.Symlink(h.Linkname, name)
				}
				links = append(links, name)
			}
		case tar.TypeReg:
			err = extractFile(root, name, tr, entryMode(h, preserveMode, 0o644))
		}
		if errors.Is(err, errArchiveTooLarge) {
			return fmt.Errorf("archive is over the limit of %d bytes uncompressed", lim.extractBytes)
		}
		if err != nil {
			return err
		}
	}
	// A link checked alone can still leave dst through links extracted
	// after it: check each again in the finished tree.
	for _, name := range links {
		if err := checkLink(root, name); err != nil {
			return fmt.Errorf("illegal filepath in symlink: %w", err)
		}
	}
	return nil
}

// entryName is an archive entry's name, cleaned; absolute names and names
// with a .. component are refused.
func entryName(name string) (string, error) {
	if strings.ContainsRune(name, 0) || path.IsAbs(name) || filepath.IsAbs(name) {
		return "", fmt.Errorf("illegal filepath in archive: %q", name)
	}
	for _, c := range strings.Split(name, "/") {
		if c == ".." {
			return "", fmt.Errorf("illegal filepath in archive: %q", name)
		}
	}
	return path.Clean(name), nil
}

// checkLinkName refuses a link whose target is absolute or climbs, read
// alone, out of the archive.
func checkLinkName(name, target string) error {
	if path.IsAbs(target) || strings.ContainsRune(target, 0) {
		return fmt.Errorf("illegal filepath in symlink: %s -> %s", name, target)
	}
	depth := len(splitPath(path.Dir(name)))
	for _, c := range splitPath(target) {
		if c == ".." {
			if depth--; depth < 0 {
				return fmt.Errorf("illegal filepath in symlink: %s -> %s", name, target)
			}
			continue
		}
		depth++
	}
	return nil
}

func entryMode(h *tar.Header, preserve bool, def fs.FileMode) fs.FileMode {
	if preserve {
		return fs.FileMode(h.Mode) & fs.ModePerm
	}
	return def
}

// extractFile writes the current entry of tr to name in root.
func extractFile(root *os.Root, name string, tr io.Reader, mode fs.FileMode) error {
	if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return fmt.Errorf("error creating file %q: %w", name, err)
	}
	if _, err := io.Copy(f, tr); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
