package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Limits bound an unpacked archive.
type Limits struct {
	// TotalBytes bounds all files together, FileBytes each file.
	TotalBytes, FileBytes int64
}

// maxEntries bounds the entries of one archive.
const maxEntries = 10_000

// unpack writes the chart archive data (gzipped tar, every entry under one
// top directory, as `helm package` writes it) into dir without that top
// directory. Only regular files and directories are written; links and
// devices are skipped, as Helm's loader reads no content from them. An
// absolute name, a name with "..", or an archive past lim is an error.
func unpack(data []byte, dir string, lim Limits) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not a gzipped archive: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	total, top := int64(0), ""
	for n := 0; ; n++ {
		hd, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read archive: %w", err)
		}
		if n >= maxEntries {
			return fmt.Errorf("the archive has more than %d entries", maxEntries)
		}
		name := strings.ReplaceAll(hd.Name, `\`, "/")
		if path.IsAbs(name) || strings.Contains("/"+name+"/", "/../") {
			return fmt.Errorf("archive entry %q is outside the chart", hd.Name)
		}
		first, rest, _ := strings.Cut(path.Clean(name), "/")
		if top == "" {
			top = first
		} else if first != top {
			return fmt.Errorf("archive entry %q is not under the chart's directory %s", hd.Name, top)
		}
		if rest == "" || rest == "." {
			continue
		}
		target := filepath.Join(dir, filepath.FromSlash(rest))
		switch hd.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o700); err != nil {
				return err
			}
			continue
		case tar.TypeReg:
		default:
			continue
		}
		if hd.Size > lim.FileBytes {
			return fmt.Errorf("archive entry %s: %w: %d bytes, limit is %d", rest, ErrTooLarge, hd.Size, lim.FileBytes)
		}
		if total += hd.Size; total > lim.TotalBytes {
			return fmt.Errorf("the unpacked chart is %w: more than %d bytes", ErrTooLarge, lim.TotalBytes)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return err
		}
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fmt.Errorf("archive entry %s: %w", rest, err)
		}
		_, err = io.Copy(f, io.LimitReader(tr, hd.Size))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("archive entry %s: %w", rest, err)
		}
	}
}
