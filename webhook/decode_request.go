package webhook

import (
	"github.com/valyala/fastjson"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// decodeParsedReview fills in from a parsed review whose objects
// takeObjects has taken out: the fields the API server sends, read
// straight from the parsed values, as the API machinery's case-sensitive
// decoder reads them (a repeated key overwrites, a repeated object merges,
// an empty list is an empty slice, a null sets a pointer, list or map to
// nil and leaves anything else). It returns false, having changed in or
// not, at the first key or type it does not expect (a number, options
// that are neither an object nor null, an unknown key, a review's
// response); the caller then decodes the review the reference way.
// FuzzDecodeReview holds the two equal.
func decodeParsedReview(v *fastjson.Value, in *admissionv1.AdmissionReview) bool {
	return fields(v, func(key []byte, field *fastjson.Value) bool {
		switch string(key) {
		case "apiVersion":
			return str(field, &in.APIVersion)
		case "kind":
			return str(field, &in.Kind)
		case "request":
			if isNull(field) {
				in.Request = nil
				return true
			}
			if in.Request == nil {
				in.Request = &admissionv1.AdmissionRequest{}
			}
			return decodeRequest(field, in.Request)
		}
		return false
	})
}

// decodeRequest fills req from v; see decodeParsedReview.
func decodeRequest(v *fastjson.Value, req *admissionv1.AdmissionRequest) bool {
	return fields(v, func(key []byte, field *fastjson.Value) bool {
		switch string(key) {
		case "uid":
			s := string(req.UID)
			ok := str(field, &s)
			req.UID = types.UID(s)
			return ok
		case "kind":
			return gvk(field, &req.Kind)
		case "requestKind":
			return setNil(field, &req.RequestKind) && (req.RequestKind == nil || gvk(field, req.RequestKind))
		case "resource":
			return gvr(field, &req.Resource)
		case "requestResource":
			return setNil(field, &req.RequestResource) && (req.RequestResource == nil || gvr(field, req.RequestResource))
		case "subResource":
			return str(field, &req.SubResource)
		case "requestSubResource":
			return str(field, &req.RequestSubResource)
		case "name":
			return str(field, &req.Name)
		case "namespace":
			return str(field, &req.Namespace)
		case "operation":
			s := string(req.Operation)
			ok := str(field, &s)
			req.Operation = admissionv1.Operation(s)
			return ok
		case "userInfo":
			return userInfo(field, &req.UserInfo)
		case "dryRun":
			switch field.Type() {
			case fastjson.TypeNull:
				req.DryRun = nil
			case fastjson.TypeTrue:
				req.DryRun = ptr.To(true)
			case fastjson.TypeFalse:
				req.DryRun = ptr.To(false)
			default:
				return false
			}
			return true
		case "options":
			// An object (as the API server sends) keeps its bytes as
			// they came: the parser unescapes no string it was not asked
			// for. A string would be written back with its own escapes.
			switch field.Type() {
			case fastjson.TypeNull: // RawExtension keeps what it had
			case fastjson.TypeObject:
				req.Options = runtime.RawExtension{Raw: field.MarshalTo(nil)}
			default:
				return false
			}
			return true
		}
		return false
	})
}

// fields calls set for each key of the object v, false when v is not an
// object or set returns false. A null leaves the struct as it is.
func fields(v *fastjson.Value, set func(key []byte, field *fastjson.Value) bool) bool {
	if isNull(v) {
		return true
	}
	o, err := v.Object()
	if err != nil {
		return false
	}
	ok := true
	o.Visit(func(key []byte, field *fastjson.Value) {
		ok = ok && set(key, field)
	})
	return ok
}

func gvk(v *fastjson.Value, out *metav1.GroupVersionKind) bool {
	return groupVersion(v, &out.Group, &out.Version, "kind", &out.Kind)
}

func gvr(v *fastjson.Value, out *metav1.GroupVersionResource) bool {
	return groupVersion(v, &out.Group, &out.Version, "resource", &out.Resource)
}

// groupVersion reads an object of the strings group, version and one
// named third.
func groupVersion(v *fastjson.Value, group, version *string, third string, out *string) bool {
	return fields(v, func(key []byte, field *fastjson.Value) bool {
		switch string(key) {
		case "group":
			return str(field, group)
		case "version":
			return str(field, version)
		case third:
			return str(field, out)
		}
		return false
	})
}

func userInfo(v *fastjson.Value, out *authenticationv1.UserInfo) bool {
	return fields(v, func(key []byte, field *fastjson.Value) bool {
		switch string(key) {
		case "username":
			return str(field, &out.Username)
		case "uid":
			return str(field, &out.UID)
		case "groups":
			return strs(field, &out.Groups)
		case "extra":
			if isNull(field) {
				out.Extra = nil
				return true
			}
			if out.Extra == nil {
				out.Extra = map[string]authenticationv1.ExtraValue{}
			}
			return fields(field, func(key []byte, values *fastjson.Value) bool {
				var list []string
				ok := strs(values, &list)
				out.Extra[string(key)] = list
				return ok
			})
		}
		return false
	})
}

// isNull reports whether v is null: a string, a struct or an options
// field keeps what it had, a pointer, a list or a map becomes nil.
func isNull(v *fastjson.Value) bool { return v.Type() == fastjson.TypeNull }

// setNil sets *p to nil for a null v and to a new value when it is nil
// and v is not null; false when v is neither null nor an object.
func setNil[T any](v *fastjson.Value, p **T) bool {
	switch v.Type() {
	case fastjson.TypeNull:
		*p = nil
	case fastjson.TypeObject:
		if *p == nil {
			*p = new(T)
		}
	default:
		return false
	}
	return true
}

// str sets out to the string v (a null leaves it).
func str(v *fastjson.Value, out *string) bool {
	if isNull(v) {
		return true
	}
	b, err := v.StringBytes()
	if err != nil {
		return false
	}
	*out = string(b)
	return true
}

// strs sets out to the list of strings v (empty, not nil, for []; nil
// for null).
func strs(v *fastjson.Value, out *[]string) bool {
	if isNull(v) {
		*out = nil
		return true
	}
	items, err := v.Array()
	if err != nil {
		return false
	}
	list := make([]string, len(items))
	for i, item := range items {
		if !str(item, &list[i]) {
			return false
		}
	}
	*out = list
	return true
}
