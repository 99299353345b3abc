package policies

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/tollgate-dev/tollgate/internal/bounded"
)

// maxPolicyBytes bounds the size of one Rego file.
const maxPolicyBytes = 4 << 20

// userRuleName matches the rule names conftest evaluates: deny, violation and
// warn, optionally with _suffixes (deny_privileged).
var userRuleName = regexp.MustCompile(`^(deny|violation|warn)(_[a-zA-Z0-9]+)*$`)

// userRule is one deny/violation/warn rule of a user package.
type userRule struct {
	// pkg is the package path without "data.", e.g. "main"; it is the rule
	// id of results that do not set one.
	pkg string
	// name is the rule name, e.g. "deny" or "warn_ports".
	name string
	// ref is the full reference, e.g. data.main.deny.
	ref      ast.Ref
	severity Severity
}

// preparedUser is the compiled form of the user policies.
type preparedUser struct {
	query *rego.PreparedEvalQuery
	rules []userRule
	// ids are the rule ids the user policies can report that New can tell
	// statically: package paths and literal "rule"/"id" values.
	ids map[string]bool
	// reads is what the rules read of the object.
	reads *reads
}

// isPolicyFile reports whether name is a product policy file: *.rego but not
// a *_test.rego unit test.
func isPolicyFile(name string) bool {
	return strings.HasSuffix(name, ".rego") && !strings.HasSuffix(name, "_test.rego")
}

// loadFS parses the product policy files at the top of fsys.
func loadFS(fsys fs.FS) (map[string]*ast.Module, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read directory: %w", err)
	}
	modules := map[string]*ast.Module{}
	for _, ent := range entries {
		if ent.IsDir() || !isPolicyFile(ent.Name()) {
			continue
		}
		src, err := fs.ReadFile(fsys, ent.Name())
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", ent.Name(), err)
		}
		name := libraryDir + "/" + ent.Name()
		m, err := parseModule(name, src)
		if err != nil {
			return nil, err
		}
		modules[name] = m
	}
	if len(modules) == 0 {
		return nil, errors.New("no .rego files found")
	}
	return modules, nil
}

// loadDirs parses the Rego files under dirs (recursively) that match keep.
// A path may also name a single file, which is loaded whatever its name.
func loadDirs(dirs []string, keep func(name string) bool) (map[string]*ast.Module, error) {
	modules := map[string]*ast.Module{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !d.Type().IsRegular() {
				return nil
			}
			if path != dir && !keep(d.Name()) {
				return nil
			}
			if _, seen := modules[path]; seen {
				return nil
			}
			src, err := bounded.ReadFile(path, maxPolicyBytes)
			if err != nil {
				return err
			}
			m, err := parseModule(path, src)
			if err != nil {
				return err
			}
			modules[path] = m
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(modules) == 0 {
		return nil, fmt.Errorf("no .rego files found in %s", strings.Join(dirs, ", "))
	}
	return modules, nil
}

// parseModule parses one Rego v1 module; errors carry file:line.
func parseModule(name string, src []byte) (*ast.Module, error) {
	m, err := ast.ParseModuleWithOpts(name, string(src), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("%s: empty module: want a package declaration", name)
	}
	return m, nil
}

// prepareUser loads, compiles and prepares the user policies.
func prepareUser(ctx context.Context, dirs, namespaces []string, allowNetwork bool) (preparedUser, error) {
	modules, err := loadDirs(dirs, isPolicyFile)
	if err != nil {
		return preparedUser{}, fmt.Errorf("load policies: %w", err)
	}
	var caps *ast.Capabilities
	if !allowNetwork {
		caps = offlineCapabilities()
	}
	compiler, err := compileWith(modules, caps)
	if err != nil {
		if !allowNetwork && mentionsNetworkBuiltin(err) {
			return preparedUser{}, fmt.Errorf("compile policies: %w (builtins that reach the network or the process are off; --allow-network turns them on)", err)
		}
		return preparedUser{}, fmt.Errorf("compile policies: %w", err)
	}
	rules, err := selectUserRules(discoverUserRules(compiler), namespaces)
	if err != nil {
		return preparedUser{}, err
	}
	out := preparedUser{rules: rules, ids: literalRuleIDs(compiler)}
	for _, r := range rules {
		out.ids[r.pkg] = true
	}
	if len(rules) == 0 {
		return out, nil
	}
	pq, err := prepare(ctx, compiler, userQuery(rules))
	if err != nil {
		return preparedUser{}, fmt.Errorf("prepare policies: %w", err)
	}
	out.query, out.reads = pq, userReads(compiler, rules)
	return out, nil
}

// networkBuiltins are the name prefixes of the builtins that reach the
// network or read the process (its environment, through opa.runtime): user
// policies judge objects written by tenants, in processes that hold
// credentials.
var networkBuiltins = []string{"http.send", "net.", "opa.runtime"}

// offlineCapabilities are OPA's capabilities without the network builtins.
func offlineCapabilities() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	caps.Builtins = slices.DeleteFunc(caps.Builtins, func(b *ast.Builtin) bool {
		return slices.ContainsFunc(networkBuiltins, func(p string) bool { return strings.HasPrefix(b.Name, p) })
	})
	return caps
}

// mentionsNetworkBuiltin reports whether a compile error is about a call
// to a network builtin.
func mentionsNetworkBuiltin(err error) bool {
	msg := err.Error()
	return slices.ContainsFunc(networkBuiltins, func(p string) bool { return strings.Contains(msg, "undefined function "+p) })
}

// discoverUserRules finds the deny/violation/warn rules of the compiled user
// packages, sorted by package and name.
func discoverUserRules(compiler *ast.Compiler) []userRule {
	seen := map[string]bool{}
	var rules []userRule
	for _, m := range compiler.Modules {
		pkg := packageID(m.Package.Path)
		for _, r := range m.Rules {
			ref := r.Head.Ref()
			if len(ref) != 1 || len(r.Head.Args) > 0 {
				continue
			}
			name := ref[0].Value.String()
			if !userRuleName.MatchString(name) || seen[pkg+"\x00"+name] {
				continue
			}
			seen[pkg+"\x00"+name] = true
			sev := SeverityDeny
			if strings.HasPrefix(name, "warn") {
				sev = SeverityWarn
			}
			rules = append(rules, userRule{
				pkg:      pkg,
				name:     name,
				ref:      m.Package.Path.Append(ast.StringTerm(name)),
				severity: sev,
			})
		}
	}
	slices.SortFunc(rules, func(a, b userRule) int {
		if c := strings.Compare(a.pkg, b.pkg); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return rules
}

// selectUserRules keeps the rules of the requested namespaces; every
// requested namespace must define at least one rule.
func selectUserRules(rules []userRule, namespaces []string) ([]userRule, error) {
	if len(namespaces) == 0 {
		return rules, nil
	}
	want := map[string]bool{}
	for _, ns := range namespaces {
		want[strings.TrimPrefix(ns, "data.")] = true
	}
	found := map[string]bool{}
	var out []userRule
	for _, r := range rules {
		if want[r.pkg] {
			out = append(out, r)
			found[r.pkg] = true
		}
	}
	for _, ns := range namespaces {
		if ns := strings.TrimPrefix(ns, "data."); !found[ns] {
			return nil, fmt.Errorf("select namespace %q: no package of that name defines deny, violation or warn rules", ns)
		}
	}
	return out, nil
}

// userQuery builds one query that evaluates every user rule at once: an
// array with, per rule, an array holding the rule's value, or nothing when
// the rule is undefined. One evaluation per Input, whatever the rule count.
func userQuery(rules []userRule) string {
	var b strings.Builder
	b.WriteString("out := [")
	for i, r := range rules {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "[x | x := %s]", r.ref)
	}
	b.WriteString("]")
	return b.String()
}

// packageID is a package path without the data. prefix: "main",
// "kubernetes.security".
func packageID(path ast.Ref) string {
	parts := make([]string, 0, len(path))
	for _, t := range path[1:] {
		if s, ok := t.Value.(ast.String); ok {
			parts = append(parts, string(s))
		} else {
			parts = append(parts, t.Value.String())
		}
	}
	return strings.Join(parts, ".")
}

// literalRuleIDs collects the string values of "rule" and "id" keys in
// object literals of the user policies: the rule ids results can carry.
func literalRuleIDs(compiler *ast.Compiler) map[string]bool {
	ids := map[string]bool{}
	for _, m := range compiler.Modules {
		ast.WalkTerms(m, func(t *ast.Term) bool {
			obj, ok := t.Value.(ast.Object)
			if !ok {
				return false
			}
			for _, key := range []string{"rule", "id"} {
				if v := obj.Get(ast.StringTerm(key)); v != nil {
					if s, ok := v.Value.(ast.String); ok {
						ids[string(s)] = true
					}
				}
			}
			return false
		})
	}
	return ids
}
