package authority_test

import (
	"fmt"
	"go/ast"
	"go/types"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/go/packages"
)

const module = "github.com/tollgate-dev/tollgate"

// doors are the packages allowed to hold a writing client to a
// destination: the authority and the applier it alone builds.
var doors = []string{module + "/engine/authority", module + "/engine/apply"}

// controlPlaneKinds are the only objects the controllers write themselves,
// in their own namespace: Argo CD's resources (status, finalizers,
// annotations) and the Leases of shard membership.
var controlPlaneKinds = []string{
	module + "/api/v1alpha1.Application",
	module + "/api/v1alpha1.ApplicationSet",
	"k8s.io/api/coordination/v1.Lease",
}

// clientConstructors build a client that can write.
var clientConstructors = map[string][]string{
	"sigs.k8s.io/controller-runtime/pkg/client": {"New", "NewWithWatch"},
	"k8s.io/client-go/dynamic":                  {"NewForConfig", "NewForConfigAndClient", "NewForConfigOrDie"},
	"k8s.io/client-go/kubernetes":               {"NewForConfig", "NewForConfigAndClient", "NewForConfigOrDie"},
	"k8s.io/client-go/metadata":                 {"NewForConfig", "NewForConfigAndClient", "NewForConfigOrDie"},
	"k8s.io/client-go/rest":                     {"RESTClientFor", "UnversionedRESTClientFor", "RESTClientForConfigAndClient"},
	module + "/engine/apply":                    {"New", "NewForConfig"},
}

var writeMethods = []string{"Create", "Update", "Patch", "Delete", "DeleteAllOf", "Apply"}

// reviewed are functions outside the authority that build or use a client
// in a way the type check cannot tell apart from a write to a destination,
// each reviewed for the reason given. Keep it short.
var reviewed = map[string]string{
	module + "/engine/argocd.WatchNamed": "watches one ConfigMap or Secret of the control-plane namespace (argocd-cm); the clientset only lists and watches",
}

// TestOneDoorOut fails when a package of the engine other than the
// authority can write to a destination cluster: it builds a client, holds
// an applier, or writes an object other than the controllers' own
// control-plane kinds through any client. It reads the type-checked code,
// not strings.
func TestOneDoorOut(t *testing.T) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedSyntax, Dir: "../.."}
	pkgs, err := packages.Load(cfg, "./engine/...")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 10 {
		t.Fatalf("loaded %d packages of the engine; the check would prove nothing", len(pkgs))
	}
	var findings []string
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Fatalf("load %s: %v", p.PkgPath, e)
		}
		if slices.Contains(doors, p.PkgPath) {
			continue
		}
		findings = append(findings, writers(p)...)
	}
	if len(findings) > 0 {
		t.Errorf("only %s may write to a destination; found:\n%s", doors[0], strings.Join(findings, "\n"))
	}
}

// writers lists what in p could write to a destination.
func writers(p *packages.Package) []string {
	var out []string
	at := func(n ast.Node, format string, args ...any) {
		out = append(out, p.Fset.Position(n.Pos()).String()+": "+fmt.Sprintf(format, args...))
	}
	for _, f := range p.Syntax {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && reviewed[p.PkgPath+"."+fd.Name.Name] != "" {
				continue
			}
			inspect(p, d, at)
		}
	}
	return out
}

// inspect reports through at what in the declaration d could write.
func inspect(p *packages.Package, d ast.Decl, at func(ast.Node, string, ...any)) {
	ast.Inspect(d, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			obj := p.TypesInfo.Defs[n]
			if obj == nil {
				obj = p.TypesInfo.Uses[n]
			}
			if v, ok := obj.(*types.Var); ok && holdsApplier(v.Type()) {
				at(n, "holds an applier (%s)", v.Type())
			}
		case *ast.CallExpr:
			fn := callee(p.TypesInfo, n)
			if fn == nil || fn.Pkg() == nil {
				return true
			}
			sig := fn.Type().(*types.Signature)
			if sig.Recv() == nil {
				if slices.Contains(clientConstructors[fn.Pkg().Path()], fn.Name()) {
					at(n, "builds a client (%s.%s)", fn.Pkg().Path(), fn.Name())
				}
				return true
			}
			if !slices.Contains(writeMethods, fn.Name()) || !isClientWriter(sig.Recv().Type()) || len(n.Args) < 2 {
				return true
			}
			if obj := p.TypesInfo.TypeOf(n.Args[1]); !controlPlaneKind(obj) {
				at(n, "writes %s with %s", obj, fn.FullName())
			}
		}
		return true
	})
}

// callee is the function or method a call names.
func callee(info *types.Info, call *ast.CallExpr) *types.Func {
	switch fun := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		fn, _ := info.Uses[fun].(*types.Func)
		return fn
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[fun]; ok {
			fn, _ := sel.Obj().(*types.Func)
			return fn
		}
		fn, _ := info.Uses[fun.Sel].(*types.Func)
		return fn
	}
	return nil
}

func holdsApplier(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == module+"/engine/apply" && n.Obj().Name() == "Applier"
}

// isClientWriter reports whether a method's receiver is one of
// controller-runtime's writers (client.Writer, the status and
// sub-resource writers) or a type that embeds them.
func isClientWriter(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return false
	}
	return n.Obj().Pkg().Path() == "sigs.k8s.io/controller-runtime/pkg/client" ||
		strings.HasPrefix(n.Obj().Pkg().Path(), "k8s.io/client-go/")
}

func controlPlaneKind(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && slices.Contains(controlPlaneKinds, n.Obj().Pkg().Path()+"."+n.Obj().Name())
}

// TestOneDoorOutCatches proves the check finds each kind of escape.
func TestOneDoorOutCatches(t *testing.T) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedSyntax, Dir: "testdata/escape"}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil || len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		t.Fatalf("load testdata/escape: %v %v", err, pkgs)
	}
	var got []string
	for _, f := range writers(pkgs[0]) {
		got = append(got, f[strings.LastIndex(f, ": ")+2:])
	}
	want := []string{
		"holds an applier (*github.com/tollgate-dev/tollgate/engine/apply.Applier)",
		"builds a client (sigs.k8s.io/controller-runtime/pkg/client.New)",
		"holds an applier (*github.com/tollgate-dev/tollgate/engine/apply.Applier)",
		"writes *k8s.io/api/apps/v1.Deployment with (sigs.k8s.io/controller-runtime/pkg/client.Writer).Delete",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}
