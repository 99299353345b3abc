package health

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// testFile is Argo CD's health_test.yaml.
type testFile struct {
	Tests []struct {
		HealthStatus Result `json:"healthStatus"`
		InputPath    string `json:"inputPath"`
	} `json:"tests"`
}

// ScriptTest is the outcome of one case of a health_test.yaml.
type ScriptTest struct {
	// Script is the health.lua, relative to the directory tested.
	Script string
	// Input is the case's inputPath, relative to the directory tested.
	Input string
	Want  Result
	Got   Result
	// Err is why the case could not run or its result differs.
	Err error
}

// Passed reports whether the case ran and gave the expected health.
func (t ScriptTest) Passed() bool { return t.Err == nil }

// maxTestInputBytes bounds a test input file.
const maxTestInputBytes = 4 << 20

// TestScripts runs every health_test.yaml of dir, a directory in Argo CD's
// resource_customizations layout (<group>/<kind>/health.lua beside
// health_test.yaml and its inputs), through the same runner the engine
// uses, and returns one ScriptTest per case in path order. An error means
// dir could not be walked.
func TestScripts(dir fs.FS) ([]ScriptTest, error) {
	var files []string
	err := fs.WalkDir(dir, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "health_test.yaml" {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk health checks: %w", err)
	}
	sort.Strings(files)
	var out []ScriptTest
	for _, f := range files {
		out = append(out, testScript(dir, f)...)
	}
	return out, nil
}

// testScript runs the cases of the health_test.yaml at file.
func testScript(dir fs.FS, file string) []ScriptTest {
	base := path.Dir(file)
	script := path.Join(base, healthScript)
	data, err := readBounded(dir, file)
	if err != nil {
		return []ScriptTest{{Script: script, Input: file, Err: err}}
	}
	var tf testFile
	if err := yaml.Unmarshal(data, &tf); err != nil {
		return []ScriptTest{{Script: script, Input: file, Err: fmt.Errorf("parse %s: %w", file, err)}}
	}
	code, err := readBounded(dir, script)
	if err != nil {
		return []ScriptTest{{Script: script, Input: file, Err: err}}
	}
	if len(tf.Tests) == 0 {
		return []ScriptTest{{Script: script, Input: file, Err: errors.New(file + ": no tests")}}
	}
	var out []ScriptTest
	for _, tc := range tf.Tests {
		t := ScriptTest{Script: script, Input: path.Join(base, tc.InputPath), Want: tc.HealthStatus}
		t.Got, t.Err = runTestCase(dir, string(code), t.Input)
		if t.Err == nil && t.Got != t.Want {
			t.Err = fmt.Errorf("got %s %q, want %s %q", t.Got.Status, t.Got.Message, t.Want.Status, t.Want.Message)
		}
		out = append(out, t)
	}
	return out
}

func runTestCase(dir fs.FS, code, input string) (Result, error) {
	data, err := fs.ReadFile(dir, input)
	if err != nil {
		return Result{}, err
	}
	if len(data) > maxTestInputBytes {
		return Result{}, fmt.Errorf("%s: larger than %d bytes", input, maxTestInputBytes)
	}
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		return Result{}, fmt.Errorf("parse %s: %w", input, err)
	}
	return runLua(context.Background(), code, obj.Object)
}
