package health

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/gobwas/glob"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// builtinFS holds tollgate's own Lua health checks, in Argo CD's
// resource_customizations layout: <group>/<kind>/health.lua with its
// health_test.yaml and testdata, "_" as a wildcard segment. "all:" keeps
// the wildcard directories, whose names start with "_", in the binary.
//
//go:embed all:luascripts
var builtinFS embed.FS

// Builtin returns the built-in library of Lua health checks.
func Builtin() fs.FS {
	sub, err := fs.Sub(builtinFS, "luascripts")
	if err != nil {
		panic(err) // the embedded directory exists
	}
	return sub
}

const healthScript = "health.lua"

// maxScriptBytes bounds a health script read from a directory.
const maxScriptBytes = 1 << 20

// scripts finds the Lua health check of a kind as Argo CD does: first the
// argocd-cm customizations (exact key, then wildcard keys), then each
// directory in Argo CD's layout (exact, then wildcard directories), then the
// built-in library.
type scripts struct {
	// overrides are argocd-cm's scripts keyed by "group/Kind" ("Kind" for
	// the core group), wildcards allowed.
	overrides map[string]string
	// dirs are the customizations directories, the built-in library last.
	dirs []fs.FS
	// found caches find's answers by key ([2]string{script, from}).
	found sync.Map
}

// CustomizationKey is Argo CD's key of a kind in argocd-cm and in the
// resource_customizations layout: "group/Kind", or "Kind" for the core
// group.
func CustomizationKey(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Group + "/" + gk.Kind
}

// find returns the script for gk and where it came from, "" when none.
func (s *scripts) find(gk schema.GroupKind) (script, from string) {
	k := CustomizationKey(gk)
	if v, ok := s.found.Load(k); ok {
		f := v.([2]string)
		return f[0], f[1]
	}
	script, from = s.lookup(k)
	s.found.Store(k, [2]string{script, from})
	return script, from
}

func (s *scripts) lookup(k string) (script, from string) {
	if sc, ok := s.overrides[k]; ok {
		return sc, "argocd-cm " + k
	}
	for _, pattern := range slices.Sorted(maps.Keys(s.overrides)) {
		if strings.Contains(pattern, "*") && matchKey(pattern, k) {
			return s.overrides[pattern], "argocd-cm " + pattern
		}
	}
	for _, dir := range s.dirs {
		if sc, from := findInDir(dir, k); sc != "" {
			return sc, from
		}
	}
	return "", ""
}

// findInDir returns the health.lua of key k in dir: the exact directory,
// else a directory with "_" wildcard segments that matches.
func findInDir(dir fs.FS, k string) (string, string) {
	if data, err := readBounded(dir, path.Join(k, healthScript)); err == nil {
		return string(data), path.Join(k, healthScript)
	}
	// Wildcard directories: "_" in a directory name stands for "*".
	var candidates []string
	groups, _ := fs.ReadDir(dir, ".")
	for _, g := range groups {
		if !g.IsDir() {
			continue
		}
		kinds, _ := fs.ReadDir(dir, g.Name())
		for _, kd := range kinds {
			if kd.IsDir() && strings.Contains(g.Name()+"/"+kd.Name(), "_") {
				candidates = append(candidates, g.Name()+"/"+kd.Name())
			}
		}
	}
	sort.Strings(candidates)
	for _, c := range candidates {
		if matchKey(strings.ReplaceAll(c, "_", "*"), k) {
			if data, err := readBounded(dir, path.Join(c, healthScript)); err == nil {
				return string(data), path.Join(c, healthScript)
			}
		}
	}
	return "", ""
}

func readBounded(dir fs.FS, name string) ([]byte, error) {
	fi, err := fs.Stat(dir, name)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxScriptBytes {
		return nil, fmt.Errorf("%s: %d bytes, limit is %d", name, fi.Size(), maxScriptBytes)
	}
	return fs.ReadFile(dir, name)
}

// matchKey matches a "group/Kind" key against a glob pattern whose "*"
// does not cross "/".
func matchKey(pattern, k string) bool {
	g, err := glob.Compile(pattern, '/')
	return err == nil && g.Match(k)
}

// openDirs opens customizations directories; a missing one is an error.
func openDirs(dirs []string) ([]fs.FS, error) {
	var out []fs.FS
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil {
			return nil, fmt.Errorf("customizations directory: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("customizations directory %s: %w", d, errors.New("not a directory"))
		}
		out = append(out, os.DirFS(d))
	}
	return out, nil
}
