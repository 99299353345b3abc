package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tollgate-dev/tollgate/test/testutil"
)

func TestHealthGolden(t *testing.T) {
	files := []string{"testdata/health/workloads.yaml", "testdata/health/cluster.json"}
	for _, format := range []string{healthFormatText, healthFormatJSON} {
		t.Run(format, func(t *testing.T) {
			r := runCLI(t, nil, append([]string{"health", "-o", format}, files...)...)
			if r.code != exitOK {
				t.Fatalf("exit code = %d, want 0 (error %q, stderr %q)", r.code, r.err, r.stderr)
			}
			if r.stderr != "" {
				t.Errorf("stderr = %q, want nothing", r.stderr)
			}
			checkGolden(t, "health-"+format+".golden", r.stdout)
		})
	}
}

func TestHealthJSONShape(t *testing.T) {
	r := runCLI(t, nil, "health", "-o", "json", "testdata/health/cluster.json")
	if r.code != exitOK {
		t.Fatalf("exit code = %d (error %q)", r.code, r.err)
	}
	var got []map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("output is not a JSON array of objects: %v\n%s", err, r.stdout)
	}
	want := []map[string]string{
		{"kind": "CustomResourceDefinition", "namespace": "", "name": "widgets.example.com", "status": "Healthy", "message": "CRD is healthy"},
		{"kind": "CronJob", "namespace": "shop", "name": "report", "status": "Suspended", "message": "CronJob is Suspended"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON mismatch (-want +got):\n%s", diff)
	}
}

func TestHealthStdin(t *testing.T) {
	in := strings.NewReader("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: shop}\nstatus: {phase: Pending}\n")
	r := runCLI(t, in, "health", "-")
	if r.code != exitOK {
		t.Fatalf("exit code = %d (error %q)", r.code, r.err)
	}
	if diff := cmp.Diff("PersistentVolumeClaim/shop/data: Progressing\n", r.stdout); diff != "" {
		t.Errorf("stdout mismatch (-want +got):\n%s", diff)
	}
}

func TestHealthErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		// wantErr is a substring of the error message.
		wantErr string
		// wantStdout is the exact output, printed despite the error.
		wantStdout string
	}{
		{name: "no files", args: []string{"health"}, wantErr: "requires at least 1 arg"},
		{name: "bad format", args: []string{"health", "-o", "yaml", "testdata/health/workloads.yaml"},
			wantErr: `invalid --output "yaml": valid formats are text, json`},
		{name: "missing file", args: []string{"health", "testdata/health/nope.yaml"},
			wantErr: "testdata/health/nope.yaml: "},
		{name: "invalid YAML", args: []string{"health", "testdata/health/workloads.yaml", "testdata/health/invalid.yaml"},
			wantErr: "testdata/health/invalid.yaml: document 1 (line 4): "},
		{name: "stdin twice", args: []string{"health", "-", "-"}, wantErr: `"-" (standard input) given twice`},
		{name: "field of the wrong type", args: []string{"health", "testdata/health/broken-field.yaml"},
			wantErr: "testdata/health/broken-field.yaml: document 1 (line 1): assess health of Deployment/shop/broken: read Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
			wantStdout: "Deployment/shop/broken: Unknown assess health of Deployment/shop/broken: read Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32\n" +
				"ConfigMap/shop/settings: Healthy\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, strings.NewReader(""), tt.args...)
			if r.code != exitUsage {
				t.Fatalf("exit code = %d, want %d (stdout %q)", r.code, exitUsage, r.stdout)
			}
			if !strings.Contains(r.err, tt.wantErr) {
				t.Errorf("error = %q, want it to contain %q", r.err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantStdout, r.stdout); diff != "" {
				t.Errorf("stdout mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHealthNotes(t *testing.T) {
	r := runCLI(t, nil, "health", "testdata/health/values.yaml")
	if r.code != exitOK {
		t.Fatalf("exit code = %d (error %q)", r.code, r.err)
	}
	if r.stdout != "" {
		t.Errorf("stdout = %q, want nothing", r.stdout)
	}
	want := "note: testdata/health/values.yaml:1: skipped: not a Kubernetes object (no apiVersion or kind)\n"
	if diff := cmp.Diff(want, r.stderr); diff != "" {
		t.Errorf("stderr mismatch (-want +got):\n%s", diff)
	}
}

// TestHealthCustomizations judges a custom resource with a script of a
// --customizations directory, and runs a directory's health_test.yaml
// cases with --test: the built-in library passes, a wrong case fails.
func TestHealthCustomizations(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"example.com/Widget/health.lua":          `if obj.status and obj.status.ready then return {status = "Healthy", message = "ready"} end return {status = "Progressing", message = "not ready"}`,
		"example.com/Widget/health_test.yaml":    "tests:\n- healthStatus: {status: Healthy, message: ready}\n  inputPath: testdata/ready.yaml\n- healthStatus: {status: Degraded, message: broken}\n  inputPath: testdata/ready.yaml\n",
		"example.com/Widget/testdata/ready.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nstatus: {ready: true}\n",
	})
	widget := filepath.Join(dir, "example.com/Widget/testdata/ready.yaml")
	r := runCLI(t, nil, "health", "--customizations", dir, widget)
	if r.code != exitOK || !strings.Contains(r.stdout, "Healthy") || !strings.Contains(r.stdout, "ready") {
		t.Errorf("health --customizations: exit %d, stdout:\n%s\nerror %s", r.code, r.stdout, r.err)
	}
	// The library on disk and the one built into the binary are the same
	// cases, and pass.
	disk := runCLI(t, nil, "health", "--test", "../../engine/health/luascripts")
	if disk.code != exitOK || !strings.Contains(disk.stdout, " 0 failed") {
		t.Errorf("health --test of the library on disk: exit %d, stdout:\n%s\nerror %s", disk.code, disk.stdout, disk.err)
	}
	r = runCLI(t, nil, "health", "--test", "builtin")
	if r.code != exitOK || r.stdout != disk.stdout {
		t.Errorf("health --test builtin: exit %d, stdout:\n%s\nwant the library on disk's:\n%s", r.code, r.stdout, disk.stdout)
	}
	r = runCLI(t, nil, "health", "--test", dir)
	want := "ok    example.com/Widget/health.lua  example.com/Widget/testdata/ready.yaml  Healthy\n" +
		"FAIL  example.com/Widget/health.lua  example.com/Widget/testdata/ready.yaml: got Healthy \"ready\", want Degraded \"broken\"\n" +
		"2 cases, 1 failed\n"
	if r.code != exitDenied || r.stdout != want {
		t.Errorf("health --test with a failing case: exit %d, stdout:\n%s\nwant exit %d and\n%s", r.code, r.stdout, exitDenied, want)
	}
	if r := runCLI(t, nil, "health", "--customizations", filepath.Join(dir, "nope"), widget); r.code != exitUsage {
		t.Errorf("missing --customizations directory: exit %d, want %d", r.code, exitUsage)
	}
}
