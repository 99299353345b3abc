package health

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestBuiltinLibrary runs every health_test.yaml of the built-in library.
func TestBuiltinLibrary(t *testing.T) {
	results, err := TestScripts(Builtin())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) < 20 {
		t.Errorf("%d cases in the built-in library, want at least 20", len(results))
	}
	for _, r := range results {
		if !r.Passed() {
			t.Errorf("%s with %s: %v", r.Script, r.Input, r.Err)
		}
	}
}

func widget(status map[string]any) *unstructured.Unstructured {
	obj := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "ns"}}
	if status != nil {
		obj["status"] = status
	}
	return &unstructured.Unstructured{Object: obj}
}

// TestLuaSafeOS: a script gets Argo CD's safe subset of os, to read the
// clock and format times.
func TestLuaSafeOS(t *testing.T) {
	script := `local now = os.time()
local t = os.time({year = 2024, month = 1, day = 2, hour = 3})
if type(os.clock()) ~= "number" or os.difftime(now, t) <= 0 then return {status = "Degraded", message = "clock"} end
return {status = "Healthy", message = os.date("!%Y-%m-%d", 0)}`
	c := checkerWith(t, map[string]string{"example.com/Widget": script})
	res, err := c.Assess(widget(nil))
	if err != nil || res.Status != Healthy || res.Message != "1970-01-01" {
		t.Errorf("Assess = %+v, %v; want Healthy 1970-01-01", res, err)
	}
}

// TestBuiltinLibraryEmbedded: every script and test case of the library's
// directory is built into the binary, "_" wildcard directories included.
func TestBuiltinLibraryEmbedded(t *testing.T) {
	var onDisk []string
	err := filepath.WalkDir("luascripts", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			onDisk = append(onDisk, filepath.ToSlash(strings.TrimPrefix(p, "luascripts"+string(filepath.Separator))))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var wildcard bool
	for _, p := range onDisk {
		wildcard = wildcard || strings.HasPrefix(p, "_")
		if _, err := fs.Stat(Builtin(), p); err != nil {
			t.Errorf("%s is not built into the binary: %v", p, err)
		}
	}
	if !wildcard {
		t.Error("no wildcard (_) directory in the library; the test checks nothing of them")
	}
}

// TestLuaHostileScripts holds what a script cannot do: run for ever,
// recurse without end, reach the OS, load code, build huge strings, or
// return something else than a health.
func TestLuaHostileScripts(t *testing.T) {
	tests := []struct {
		name, script, wantMsg string
	}{
		{"endless loop", "while true do end", "health script ran longer than 1s"},
		{"endless recursion", "local function f(n) return f(n + 1) + 1 end return f(0)", "stack overflow"},
		{"os.execute", `os.execute("touch /tmp/pwned") return {status = "Healthy"}`, "attempt to call a non-function object"},
		{"os.getenv", `return {status = os.getenv("HOME")}`, "attempt to call a non-function object"},
		{"os.remove", `os.remove("/tmp/x") return {status = "Healthy"}`, "attempt to call a non-function object"},
		{"io", `io.open("/etc/passwd") return {status = "Healthy"}`, "attempt to index a non-table object(nil) with key 'open'"},
		{"load", `load("return 1")() return {status = "Healthy"}`, "attempt to call a non-function object"},
		{"require", `require("os") return {status = "Healthy"}`, "attempt to call a non-function object"},
		{"string bomb", `local s = string.rep("x", 1000000000) return {status = "Healthy"}`, "string.rep: result larger than 1048576 bytes"},
		{"error", `error("boom")`, "boom"},
		{"no table", `return "Healthy"`, "health script returned no health: want a table with status and message, got string"},
		{"unknown status", `return {status = "Fine"}`, `health script returned no health: status "Fine" is not one of`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := checkerWith(t, map[string]string{"example.com/Widget": tt.script})
			res, err := c.Assess(widget(nil))
			if err == nil || res.Status != Unknown || !strings.Contains(res.Message, tt.wantMsg) {
				t.Fatalf("Assess = %+v, %v; want Unknown with a message containing %q", res, err, tt.wantMsg)
			}
			if !strings.HasPrefix(res.Message, "assess health of Widget/ns/w with argocd-cm example.com/Widget: ") {
				t.Errorf("message %q does not name the object and the script", res.Message)
			}
		})
	}
	if _, err := os.Stat("/tmp/pwned"); err == nil {
		t.Error("a health script ran a command")
	}
}

func checkerWith(t *testing.T, overrides map[string]string, dirs ...string) *Checker {
	t.Helper()
	c, err := NewChecker(dirs...)
	if err != nil {
		t.Fatal(err)
	}
	c.SetOverrides(overrides)
	return c
}

// TestLuaScriptOrder checks where a script is found: argocd-cm (exact key
// first, then wildcards), then customizations directories (exact, then "_"
// wildcards), then the built-in library, then the Go checks.
func TestLuaScriptOrder(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ret := func(msg string) string { return `return {status = "Healthy", message = "` + msg + `"}` }
	write("example.com/Widget/health.lua", ret("dir exact"))
	write("_.example.org/_/health.lua", ret("dir wildcard"))
	write("cert-manager.io/Certificate/health.lua", ret("dir before built-in"))
	tests := []struct {
		name      string
		overrides map[string]string
		obj       *unstructured.Unstructured
		want      string
	}{
		{name: "argocd-cm exact", overrides: map[string]string{"example.com/Widget": ret("cm exact"), "*.com/*": ret("cm wildcard")}, obj: widget(nil), want: "cm exact"},
		{name: "argocd-cm wildcard", overrides: map[string]string{"*.com/*": ret("cm wildcard")}, obj: widget(nil), want: "cm wildcard"},
		{name: "directory exact", obj: widget(nil), want: "dir exact"},
		{name: "directory wildcard", obj: gadget("db.example.org", "Gadget"), want: "dir wildcard"},
		{name: "directory before built-in", obj: gadget("cert-manager.io", "Certificate"), want: "dir before built-in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := checkerWith(t, tt.overrides, dir).Assess(tt.obj)
			if err != nil || res.Message != tt.want {
				t.Fatalf("Assess = %+v, %v; want message %q", res, err, tt.want)
			}
		})
	}
	// Without customizations, the built-in library judges a Certificate.
	res, err := Assess(gadget("cert-manager.io", "Certificate"))
	if err != nil || res.Status != Progressing {
		t.Errorf("built-in Certificate check = %+v, %v; want Progressing", res, err)
	}
}

func gadget(group, kind string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": kind, "metadata": map[string]any{"name": "g"}}}
}

// TestTestScripts runs a directory whose one case fails.
func TestTestScripts(t *testing.T) {
	dir := fstest.MapFS{
		"example.com/Widget/health.lua":          {Data: []byte(`if obj.status and obj.status.ready then return {status = "Healthy"} end return {status = "Progressing", message = "waiting"}`)},
		"example.com/Widget/health_test.yaml":    {Data: []byte("tests:\n- healthStatus: {status: Progressing, message: waiting}\n  inputPath: testdata/new.yaml\n- healthStatus: {status: Degraded}\n  inputPath: testdata/ready.yaml\n")},
		"example.com/Widget/testdata/new.yaml":   {Data: []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")},
		"example.com/Widget/testdata/ready.yaml": {Data: []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nstatus: {ready: true}\n")},
	}
	got, err := TestScripts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[0].Passed() || got[1].Passed() || got[1].Err.Error() != `got Healthy "", want Degraded ""` {
		t.Fatalf("results = %+v, want the first case to pass and the second to fail", got)
	}
}

// BenchmarkAssess compares a built-in Go check (Deployment) with a Lua one
// of the built-in library (cert-manager Certificate), each a fresh VM per
// object as in Argo CD: go test -bench Assess ./engine/health.
func BenchmarkAssess(b *testing.B) {
	for _, tc := range []struct{ name, file string }{
		{"go-deployment", "testdata/deployment-healthy.yaml"},
		{"lua-certificate", "luascripts/cert-manager.io/Certificate/testdata/healthy_ready.yaml"},
	} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			b.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Assess(obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
