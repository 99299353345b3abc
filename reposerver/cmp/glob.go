package cmp

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// globAny reports whether the absolute pattern matches a file or a
// directory that is not a symlink, with the rules of
// github.com/mattn/go-zglob, which argocd-cmp-server uses for
// spec.discover.find.glob: * matches within a path component, **/ any
// number of directories (none included), every other character only
// itself; a pattern without * matches a path that exists. The walk does
// not follow symlinks.
func globAny(pattern string) (bool, error) {
	pattern = filepath.ToSlash(filepath.Clean(pattern))
	if !strings.Contains(pattern, "*") {
		_, err := os.Stat(filepath.FromSlash(pattern))
		return err == nil, nil
	}
	re, err := regexp.Compile(globRegexp(pattern))
	if err != nil {
		return false, err
	}
	parts := strings.Split(pattern, "/")
	var fixed []string
	for _, p := range parts {
		if strings.Contains(p, "*") {
			break
		}
		fixed = append(fixed, p)
	}
	root := strings.Join(fixed, "/")
	if root == "" {
		root = "/"
	}
	found := false
	err = filepath.WalkDir(filepath.FromSlash(root), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == filepath.FromSlash(root) {
				return err
			}
			return nil // an unreadable directory matches nothing
		}
		if d.Type()&fs.ModeSymlink != 0 || p == filepath.FromSlash(root) {
			return nil
		}
		if re.MatchString(filepath.ToSlash(p)) {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return found, err
}

// globRegexp translates a zglob pattern into an anchored regular
// expression.
func globRegexp(pattern string) string {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch {
		case strings.HasPrefix(pattern[i:], "**/"):
			b.WriteString("(.*/)?")
			i += 2
		case pattern[i] == '*':
			b.WriteString("[^/]*")
		default:
			b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		}
	}
	b.WriteString("$")
	return b.String()
}
