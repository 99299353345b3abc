package compat

import (
	"reflect"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// apiPackage is the package whose types the ledger covers.
var apiPackage = reflect.TypeFor[v1alpha1.Application]().PkgPath()

// Fields returns every field of the API reachable from Application,
// AppProject and ApplicationSet, as "GoType.jsonName", sorted. Fields of
// other packages' types (ObjectMeta, RawExtension) are not walked into:
// the field that holds one is its row.
func Fields() []string {
	seen := map[reflect.Type]bool{}
	var out []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || t.PkgPath() != apiPackage || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case name == "-" || !f.IsExported():
				continue
			case f.Anonymous && name == "":
				walk(f.Type)
				continue
			}
			if t.Name() == "Application" || t.Name() == "AppProject" || t.Name() == "ApplicationSet" {
				if name == "apiVersion" || name == "kind" || name == "metadata" {
					continue
				}
			}
			out = append(out, t.Name()+"."+name)
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[v1alpha1.Application]())
	walk(reflect.TypeFor[v1alpha1.AppProject]())
	walk(reflect.TypeFor[v1alpha1.ApplicationSet]())
	slices.Sort(out)
	return slices.Compact(out)
}
