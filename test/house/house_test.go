// Package house_test checks the package map of docs/architecture.md: the
// packages follow the processes (the controller, the repo-server, the
// admission webhook, the CLI) and the steps of the data path, and imports
// point down that path only.
package house_test

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

const module = "github.com/tollgate-dev/tollgate"

// steps are the step packages of the two data paths: the repo-server's
// (fetch, render, charts, ApplicationSet generation, plugins) and the controller's
// (apply with its plan, health, notifications). A step may use the types
// of the process above it and of api/ and internal/, never another step.
var steps = []string{
	"reposerver/source", "reposerver/render", "reposerver/chart", "reposerver/appset", "reposerver/cmp",
	"engine/apply", "engine/health", "engine/notify",
}

// load returns the module's product packages (test/ excluded) by path
// relative to the module, each with every module package it depends on.
func load(t *testing.T) map[string][]string {
	t.Helper()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps, Dir: "../.."}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, p := range pkgs {
		rel, ok := strings.CutPrefix(p.PkgPath, module+"/")
		if !ok || strings.HasPrefix(rel, "test/") {
			continue
		}
		seen := map[string]bool{}
		var walk func(*packages.Package)
		walk = func(p *packages.Package) {
			for path, dep := range p.Imports {
				if r, ok := strings.CutPrefix(path, module+"/"); ok && !seen[r] {
					seen[r] = true
					walk(dep)
				}
			}
		}
		walk(p)
		deps := make([]string, 0, len(seen))
		for d := range seen {
			deps = append(deps, d)
		}
		slices.Sort(deps)
		out[rel] = deps
	}
	if len(out) < 30 {
		t.Fatalf("loaded %d packages; the checks would prove nothing", len(out))
	}
	return out
}

func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// TestHouse checks the rules of the package map.
func TestHouse(t *testing.T) {
	pkgs := load(t)
	// The checks below see transitive dependencies: cmd/tollgate reaches
	// the renderer through the repo-server.
	if !slices.Contains(pkgs["cmd/tollgate"], "reposerver/render") {
		t.Fatalf("cmd/tollgate's dependencies %v miss reposerver/render; the checks would prove nothing", pkgs["cmd/tollgate"])
	}
	for _, s := range steps {
		if _, ok := pkgs[s]; !ok {
			t.Errorf("step package %s does not exist; update the list and docs/architecture.md", s)
		}
	}
	for pkg, deps := range pkgs {
		for _, d := range deps {
			// The policies are a leaf: every door evaluates them.
			if under(pkg, "policies") && !under(d, "policies") && d != "internal/bounded" {
				t.Errorf("%s imports %s: policies may import internal/bounded only", pkg, d)
			}
			// The controller reaches the repo-server through its client;
			// tenant input is parsed in the repo-server alone.
			if (under(pkg, "engine") || under(pkg, "ui")) && under(d, "reposerver") && d != "reposerver" {
				t.Errorf("%s depends on %s: outside the repo-server only its client (package reposerver) may be used", pkg, d)
			}
			// No step uses another.
			if slices.Contains(steps, pkg) && slices.ContainsFunc(steps, func(s string) bool { return under(d, s) && !under(d, pkg) }) {
				t.Errorf("step %s depends on step %s", pkg, d)
			}
			// tollgate dev's stack is a door of the CLI.
			if under(d, "devstack") && !under(pkg, "devstack") && pkg != "cmd/tollgate" {
				t.Errorf("%s imports %s: only cmd/tollgate starts the development stack", pkg, d)
			}
			// Nothing depends on a door of the CLI.
			if under(d, "cmd") {
				t.Errorf("%s imports %s", pkg, d)
			}
		}
	}
	if _, ok := pkgs["engine"]; ok {
		t.Error("package engine exists again: the controllers live in engine/controller/..., their steps beside them")
	}
}

// maxLines is the size past which a product file is split.
const maxLines = 600

// TestFilesStaySmall keeps product files below maxLines lines (generated
// ones excepted), so that a file holds one concern.
func TestFilesStaySmall(t *testing.T) {
	root := "../.."
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "test" || strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" || d.Name() == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || strings.HasPrefix(d.Name(), "zz_generated") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		n := 0
		for sc := bufio.NewScanner(f); sc.Scan(); {
			n++
		}
		if n > maxLines {
			t.Errorf("%s has %d lines; split it (at most %d)", rel, n, maxLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
