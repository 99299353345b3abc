package webhook

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/valyala/fastjson"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	sigsjson "sigs.k8s.io/json"
)

// decodeReview decodes an AdmissionReview's body. The request's object and
// oldObject, nearly all of its bytes, are parsed once, straight into the
// maps the rules read (jsonObject), rather than scanned as RawExtensions
// and unmarshalled again by decodeObject; the rest of the review, a few
// hundred bytes, is read from the parsed values too (decodeParsedReview),
// or, when it holds what the API server does not send, the whole body is
// decoded with the API machinery's case-sensitive decoder, as are bodies
// the fast parser might read otherwise than encoding/json (see plainJSON).
func decodeReview(body []byte, in *admissionv1.AdmissionReview) error {
	if !plainJSON(body) {
		return sigsjson.UnmarshalCaseSensitivePreserveInts(body, in)
	}
	p := reviewParsers.Get()
	defer reviewParsers.Put(p)
	v, err := p.ParseBytes(body)
	if err != nil {
		return sigsjson.UnmarshalCaseSensitivePreserveInts(body, in)
	}
	objs := takeObjects(v)
	var fast admissionv1.AdmissionReview
	if !decodeParsedReview(v, &fast) {
		return sigsjson.UnmarshalCaseSensitivePreserveInts(body, in)
	}
	*in = fast
	if in.Request != nil {
		if objs.object != nil {
			in.Request.Object = objectExtension(objs.object)
		}
		if objs.oldObject != nil {
			in.Request.OldObject = objectExtension(objs.oldObject)
		}
	}
	return nil
}

// plainJSON reports whether body is valid JSON that the fast parser reads
// exactly as encoding/json does, as the API server's compact reviews are:
// valid UTF-8, no control characters (the fast validator lets them through
// in strings, where encoding/json refuses them) but trailing white space,
// and no \ud escape (a surrogate, which encoding/json replaces when it is
// unpaired).
func plainJSON(body []byte) bool {
	trimmed := bytes.TrimRight(body, " \t\r\n")
	for _, c := range trimmed {
		if c < 0x20 {
			return false
		}
	}
	return utf8.Valid(trimmed) &&
		!bytes.Contains(trimmed, []byte(`\ud`)) && !bytes.Contains(trimmed, []byte(`\uD`)) &&
		fastjson.ValidateBytes(trimmed) == nil
}

// reviewParsers reuses the fast parser's buffers across reviews.
var reviewParsers fastjson.ParserPool

// requestObjects are the object and oldObject taken out of a review.
type requestObjects struct {
	object, oldObject *fastjson.Value
}

// takeObjects removes object and oldObject from every "request" of the
// review v and returns the last of each that is not null, as the review's
// RawExtensions would have kept them (a repeated key overwrites, but for a
// null; a repeated request merges into one).
func takeObjects(v *fastjson.Value) requestObjects {
	var out requestObjects
	top, err := v.Object()
	if err != nil {
		return out
	}
	top.Visit(func(key []byte, req *fastjson.Value) {
		o, err := req.Object()
		if string(key) != "request" || err != nil {
			return
		}
		o.Visit(func(key []byte, field *fastjson.Value) {
			if field.Type() == fastjson.TypeNull {
				return // RawExtension keeps what it had
			}
			switch string(key) {
			case "object":
				out.object = field
			case "oldObject":
				out.oldObject = field
			}
		})
		for _, k := range []string{"object", "oldObject"} {
			for o.Get(k) != nil {
				o.Del(k)
			}
		}
	})
	return out
}

// objectExtension is the RawExtension the review would have decoded v
// into: an object becomes a jsonObject; anything else keeps its bytes, for
// decodeObject to refuse as before.
func objectExtension(v *fastjson.Value) runtime.RawExtension {
	switch v.Type() {
	case fastjson.TypeObject:
		if m, err := jsonValue(v); err == nil {
			return runtime.RawExtension{Object: &jsonObject{Unstructured: unstructured.Unstructured{Object: m.(map[string]any)}}}
		}
	}
	return runtime.RawExtension{Raw: v.MarshalTo(nil)}
}

// jsonObject is a request object decodeReview parsed: its map is what
// encoding/json would have made of its bytes (numbers are float64), so
// decodeObject takes it as it is.
type jsonObject struct {
	unstructured.Unstructured
}

// jsonValue converts a parsed value (of a body that passed validation) to
// the Go value encoding/json decodes into an interface: maps, slices,
// strings, float64s (parsed as strconv parses them), bools and nil. Its
// error is a number out of float64's range, an error for encoding/json
// too (objectExtension leaves it to decodeObject to say).
func jsonValue(v *fastjson.Value) (any, error) {
	switch v.Type() {
	case fastjson.TypeObject:
		o, _ := v.Object()
		m := make(map[string]any, o.Len())
		var err error
		o.Visit(func(key []byte, field *fastjson.Value) {
			if err == nil {
				m[string(key)], err = jsonValue(field)
			}
		})
		return m, err
	case fastjson.TypeArray:
		items, _ := v.Array()
		out := make([]any, len(items))
		for i, item := range items {
			var err error
			if out[i], err = jsonValue(item); err != nil {
				return nil, err
			}
		}
		return out, nil
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		return string(b), nil
	case fastjson.TypeNumber:
		return strconv.ParseFloat(string(v.MarshalTo(nil)), 64)
	case fastjson.TypeTrue:
		return true, nil
	case fastjson.TypeFalse:
		return false, nil
	}
	return nil, nil
}
