package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/tollgate-dev/tollgate/policies"
)

// errNoObject is returned when a request carries no object where one is
// needed.
var errNoObject = errors.New("request carries no object")

// decodeObject decodes an object of the request into a map. The API server
// always sends JSON; an Object set in memory (tests, other callers) is
// marshalled first.
func decodeObject(raw runtime.RawExtension) (map[string]any, error) {
	if o, ok := raw.Object.(*jsonObject); ok && len(raw.Raw) == 0 {
		return o.Object, nil
	}
	data := raw.Raw
	if len(data) == 0 && raw.Object != nil {
		b, err := json.Marshal(raw.Object)
		if err != nil {
			return nil, fmt.Errorf("encode object: %w", err)
		}
		data = b
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		return nil, errNoObject
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	return obj, nil
}

// decodeAs returns the typed form of obj, an Application or AppProject as
// sent (or stored), for the webhook's own decisions: which project, which
// Applications, what a project change breaks. The rules judge obj itself:
// a typed round trip drops the fields the type does not know.
func decodeAs[T any](obj map[string]any) (*T, error) {
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, out); err != nil {
		return nil, err
	}
	return out, nil
}

// completeObject fills what the request knows and an object may lack:
// apiVersion and kind from the request kind, and metadata.namespace of a
// namespaced object. The rules then see what the API server will store.
func completeObject(obj map[string]any, req admission.Request) {
	if s, _ := obj["kind"].(string); s == "" && req.Kind.Kind != "" {
		obj["kind"] = req.Kind.Kind
	}
	if s, _ := obj["apiVersion"].(string); s == "" && req.Kind.Version != "" {
		obj["apiVersion"] = schema.GroupVersion{Group: req.Kind.Group, Version: req.Kind.Version}.String()
	}
	// The API server names a Namespace object's own name as the request
	// namespace; cluster-scoped objects get no metadata.namespace.
	if req.Namespace == "" || policies.IsClusterScoped(req.Kind.Group, req.Kind.Kind) {
		return
	}
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		if obj["metadata"] != nil {
			return // malformed: leave it for the rules to ignore
		}
		md = map[string]any{}
		obj["metadata"] = md
	}
	if s, _ := md["namespace"].(string); s == "" {
		md["namespace"] = req.Namespace
	}
}

// stringAt returns the string at path inside obj, "" when absent or not a
// string.
func stringAt(obj map[string]any, path ...string) string {
	cur := obj
	for i, p := range path {
		if i == len(path)-1 {
			s, _ := cur[p].(string)
			return s
		}
		next, ok := cur[p].(map[string]any)
		if !ok {
			return ""
		}
		cur = next
	}
	return ""
}

// beingDeleted reports whether obj has a deletionTimestamp.
func beingDeleted(obj map[string]any) bool {
	md, _ := obj["metadata"].(map[string]any)
	return md["deletionTimestamp"] != nil
}

// onlyMetadataOrStatus reports whether old and new differ only in metadata
// and status, i.e. the change cannot alter what the rules judged.
func onlyMetadataOrStatus(oldObj, newObj map[string]any) bool {
	strip := func(obj map[string]any) map[string]any {
		out := make(map[string]any, len(obj))
		for k, v := range obj {
			if k != "metadata" && k != "status" {
				out[k] = v
			}
		}
		return out
	}
	return reflect.DeepEqual(strip(oldObj), strip(newObj))
}
