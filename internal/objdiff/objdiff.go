// Package objdiff compares Kubernetes objects for people to read: the
// unified diff of their YAML and the masking of Secret values, as Argo
// CD's diff shows them. The engine's app diff, the web UI and tollgate diff
// share it.
package objdiff

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// secretMask replaces Secret values, as Argo CD's diff does; a second
// distinct value of the same key gets one more "+".
const secretMask = "++++++++"

// lastAppliedAnnotation may hold a Secret's data in clear.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// HideSecretData masks the values of a Secret's data in live and target in
// place, as gitops-engine's diff.HideSecretData: per key, equal values get
// the same mask and different ones masks of different lengths, so a change
// shows without its content. stringData (a desired object not yet applied)
// is folded into data first, and the last-applied-configuration annotation
// is dropped.
func HideSecretData(live, target map[string]any) {
	objs := []map[string]any{live, target}
	keys := map[string]bool{}
	for _, o := range objs {
		if o == nil {
			continue
		}
		foldStringData(o)
		unstructured.RemoveNestedField(o, "metadata", "annotations", lastAppliedAnnotation)
		if ann, ok, _ := unstructured.NestedMap(o, "metadata", "annotations"); ok && len(ann) == 0 {
			unstructured.RemoveNestedField(o, "metadata", "annotations")
		}
		data, _ := o["data"].(map[string]any)
		for k := range data {
			keys[k] = true
		}
	}
	for k := range keys {
		masks := map[string]string{}
		next := secretMask
		for _, o := range objs {
			data, _ := o["data"].(map[string]any)
			v, ok := data[k]
			if !ok || v == nil {
				continue
			}
			s := fmt.Sprint(v)
			if _, seen := masks[s]; !seen {
				masks[s] = next
				next += "+"
			}
			data[k] = masks[s]
		}
	}
}

// foldStringData moves a Secret's stringData into data, base64-encoded, as
// the API server does on write.
func foldStringData(obj map[string]any) {
	sd, ok := obj["stringData"].(map[string]any)
	if !ok {
		delete(obj, "stringData")
		return
	}
	data, _ := obj["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range sd {
		data[k] = base64.StdEncoding.EncodeToString([]byte(fmt.Sprint(v)))
	}
	obj["data"] = data
	delete(obj, "stringData")
}

// Unified returns the unified diff (3 lines of context) from the YAML of a
// to the YAML of b (keys sorted, as Argo CD's diff shows them), the sides
// named from and to; a nil side is empty.
func Unified(a, b map[string]any, from, to string) (string, error) {
	al, err := yamlLines(a)
	if err != nil {
		return "", err
	}
	bl, err := yamlLines(b)
	if err != nil {
		return "", err
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: al, B: bl, FromFile: from, ToFile: to, Context: 3})
}

// yamlLines returns the YAML of obj as lines ending in "\n"; none for nil.
func yamlLines(obj map[string]any) ([]string, error) {
	if obj == nil {
		return nil, nil
	}
	data, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines, nil
}
