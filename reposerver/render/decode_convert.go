package render

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// decoder turns the document nodes of one file into Documents and Notes.
type decoder struct {
	file string
	// limit is Limits.MaxNodes; budget is how many more nodes the file may
	// expand to.
	limit, budget int
	// lines: the documents keep their nodes, for LineOf.
	lines bool
	docs  []Document
	notes []Note
}

// document handles the index-th document node of the file.
func (d *decoder) document(index int, doc *yaml.Node) error {
	top := doc
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil
		}
		top = doc.Content[0]
	}
	top = deref(top)
	switch {
	case top.Kind == yaml.ScalarNode && top.ShortTag() == "!!null":
		return nil // empty document
	case top.Kind == yaml.SequenceNode:
		d.note(index, top.Line, "skipped: not a Kubernetes object (the document is a list)")
		return nil
	case top.Kind != yaml.MappingNode:
		d.note(index, top.Line, "skipped: not a Kubernetes object (the document is a single value)")
		return nil
	}
	// Decide from the keys before converting: values files and CI
	// configuration are skipped without the cost of a full conversion.
	if !hasKey(top, "apiVersion") && !hasKey(top, "kind") && !hasKey(top, "<<") {
		d.note(index, top.Line, "skipped: not a Kubernetes object (no apiVersion or kind)")
		return nil
	}
	v, err := d.convert(index, top)
	if err != nil {
		return err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return &DecodeError{File: d.file, Index: index, Line: top.Line, Err: fmt.Errorf("document is %s, not an object", describe(v))}
	}
	_, hasAPIVersion := obj["apiVersion"]
	_, hasKind := obj["kind"]
	if !hasAPIVersion && !hasKind {
		d.note(index, top.Line, "skipped: not a Kubernetes object (no apiVersion or kind)")
		return nil
	}
	return d.object(index, top, obj, "")
}

func (d *decoder) note(index, line int, msg string) {
	d.notes = append(d.notes, Note{File: d.file, Index: index, Line: line, Message: msg})
}

// convert turns the top node of a document into a Go value within the
// file's node budget. A document without aliases is measured while it is
// converted, in one pass; one with aliases, which may expand far beyond its
// text, is measured first by countNodes, which rejects alias bombs and
// cycles without expanding them.
func (d *decoder) convert(index int, top *yaml.Node) (any, error) {
	tooMany := func() error {
		return &DecodeError{File: d.file, Index: index, Line: top.Line,
			Err: fmt.Errorf("%w: the file expands to more than %d nodes (YAML alias bomb?)", ErrTooManyNodes, d.limit)}
	}
	c := converter{file: d.file, index: index, counting: true, budget: d.budget}
	v, err := c.value(top)
	switch {
	case err == nil:
		d.budget = c.budget
		return v, nil
	case errors.Is(err, errOverBudget):
		return nil, tooMany()
	case !errors.Is(err, errAlias):
		return nil, err
	}
	size, err := countNodes(top, d.budget)
	if err != nil {
		return nil, &DecodeError{File: d.file, Index: index, Line: top.Line, Err: err}
	}
	if size > d.budget {
		return nil, tooMany()
	}
	d.budget -= size
	c = converter{file: d.file, index: index}
	return c.value(top)
}

// object validates a Kubernetes object and records it, flattening Lists.
// where prefixes messages about List items ("items[3]: ").
func (d *decoder) object(index int, n *yaml.Node, obj map[string]any, where string) error {
	fail := func(format string, args ...any) error {
		return &DecodeError{File: d.file, Index: index, Line: n.Line, Err: fmt.Errorf(where+format, args...)}
	}
	av, hasAPIVersion := obj["apiVersion"]
	k, hasKind := obj["kind"]
	switch {
	case !hasAPIVersion:
		return fail("object has kind %s but no apiVersion", describe(k))
	case !hasKind:
		return fail("object has apiVersion %s but no kind", describe(av))
	}
	apiVersion, ok := av.(string)
	if !ok || apiVersion == "" {
		return fail("apiVersion must be a non-empty string, got %s", describe(av))
	}
	kind, ok := k.(string)
	if !ok || kind == "" {
		return fail("kind must be a non-empty string, got %s", describe(k))
	}
	if items, isList, err := listItems(apiVersion, kind, obj); err != nil {
		return fail("%v", err)
	} else if isList {
		itemsNode := lookupNode(n, "items")
		for i, it := range items {
			itemNode := n
			if itemsNode != nil && itemsNode.Kind == yaml.SequenceNode && i < len(itemsNode.Content) {
				itemNode = deref(itemsNode.Content[i])
			}
			itemWhere := fmt.Sprintf("%sitems[%d]: ", where, i)
			m, ok := it.(map[string]any)
			if !ok {
				return &DecodeError{File: d.file, Index: index, Line: itemNode.Line,
					Err: fmt.Errorf("%sList item is %s, not an object", itemWhere, describe(it))}
			}
			if err := d.object(index, itemNode, m, itemWhere); err != nil {
				return err
			}
		}
		return nil
	}
	doc := Document{Object: obj, File: d.file, Index: index, Line: n.Line}
	if d.lines {
		doc.node = n
	}
	d.docs = append(d.docs, doc)
	return nil
}

// listItems reports whether obj is a list to flatten: apiVersion v1 kind
// List, or any kind ending in List that has an items array.
func listItems(apiVersion, kind string, obj map[string]any) ([]any, bool, error) {
	items, present := obj["items"]
	arr, isArr := items.([]any)
	if kind == "List" && apiVersion == "v1" {
		if present && items != nil && !isArr {
			return nil, false, fmt.Errorf("List items must be a list, got %s", describe(items))
		}
		return arr, true, nil
	}
	if strings.HasSuffix(kind, "List") && isArr {
		return arr, true, nil
	}
	return nil, false, nil
}

// describe names a decoded value for error messages.
func describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(t)
	case int64, float64, bool:
		return fmt.Sprintf("%T %v", t, t)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	default:
		return fmt.Sprintf("%T", t)
	}
}

// deref follows aliases to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < maxDepth; i++ {
		n = n.Alias
	}
	return n
}

// hasKey reports whether the mapping node n has the plain key k.
func hasKey(n *yaml.Node, k string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if key := deref(n.Content[i]); key.Kind == yaml.ScalarNode && key.Value == k {
			return true
		}
	}
	return false
}

// countNodes returns how many nodes n expands to, counting each use of an
// alias in full, and stops counting once the total passes limit. It fails
// on alias cycles and on nesting deeper than maxDepth. Shared subtrees are
// measured once, so an alias bomb is rejected in time linear in its text.
func countNodes(n *yaml.Node, limit int) (int, error) {
	c := nodeCounter{limit: limit, memo: map[*yaml.Node]measure{}, active: map[*yaml.Node]bool{}}
	m, err := c.measure(n)
	return m.size, err
}

type measure struct{ size, height int }

type nodeCounter struct {
	limit  int
	memo   map[*yaml.Node]measure
	active map[*yaml.Node]bool
}

func (c *nodeCounter) measure(n *yaml.Node) (measure, error) {
	if m, ok := c.memo[n]; ok {
		return m, nil
	}
	if c.active[n] {
		return measure{}, fmt.Errorf("alias cycle at line %d", n.Line)
	}
	c.active[n] = true
	defer delete(c.active, n)
	m := measure{size: 1, height: 1}
	children := n.Content
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return measure{}, fmt.Errorf("alias %q at line %d has no anchor", n.Value, n.Line)
		}
		children = []*yaml.Node{n.Alias}
		m.size = 0
		m.height = 0
	}
	for _, ch := range children {
		cm, err := c.measure(ch)
		if err != nil {
			return measure{}, err
		}
		m.size = saturatingAdd(m.size, cm.size, c.limit+1)
		m.height = max(m.height, cm.height+1)
	}
	if m.height > maxDepth {
		return measure{}, fmt.Errorf("nesting deeper than %d levels", maxDepth)
	}
	c.memo[n] = m
	return m, nil
}

func saturatingAdd(a, b, ceiling int) int {
	if a >= ceiling || b >= ceiling || a+b >= ceiling {
		return ceiling
	}
	return a + b
}

// converter turns yaml nodes into plain Go values.
//
// With counting set it takes one unit of budget per node and stops with
// errOverBudget when the budget runs out, and with errAlias at the first
// alias: a tree without aliases is finite and no deeper than the parser
// allows, so counting while converting bounds it. Without counting the tree
// must have been measured by countNodes first.
type converter struct {
	file     string
	index    int
	counting bool
	budget   int
}

// Sentinel errors of a counting converter, handled by decoder.convert.
var (
	errOverBudget = errors.New("node budget exhausted")
	errAlias      = errors.New("alias found")
)

// visit accounts for one node in counting mode: it fails on an alias or
// when the budget is spent.
func (c *converter) visit(n *yaml.Node) error {
	if !c.counting {
		return nil
	}
	if n.Kind == yaml.AliasNode {
		return errAlias
	}
	if c.budget <= 0 {
		return errOverBudget
	}
	c.budget--
	return nil
}

func (c *converter) fail(n *yaml.Node, format string, args ...any) error {
	return &DecodeError{File: c.file, Index: c.index, Line: n.Line, Err: fmt.Errorf(format, args...)}
}

func (c *converter) value(n *yaml.Node) (any, error) {
	if err := c.visit(n); err != nil {
		return nil, err
	}
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		return c.mapping(n)
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, item := range n.Content {
			v, err := c.value(item)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case yaml.ScalarNode:
		return c.scalar(n)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0])
	default:
		return nil, c.fail(n, "unsupported YAML node")
	}
}

// mapping converts a mapping, applying merge keys (<<) the way yaml.v3
// does: keys written in the mapping win over merged ones, and earlier merge
// sources win over later ones. Duplicate keys are an error: which one wins
// differs between tools, so a policy could check one value while the
// cluster gets the other.
func (c *converter) mapping(n *yaml.Node) (map[string]any, error) {
	out := make(map[string]any, len(n.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if err := c.visit(n.Content[i]); err != nil {
			return nil, err
		}
		kn, vn := deref(n.Content[i]), n.Content[i+1]
		if kn.Kind == yaml.ScalarNode && kn.ShortTag() == "!!merge" {
			merges = append(merges, vn)
			continue
		}
		key, err := c.key(kn)
		if err != nil {
			return nil, err
		}
		if _, dup := out[key]; dup {
			return nil, c.fail(kn, "mapping key %q already defined at line %d", key, keyLine(n, key, i))
		}
		v, err := c.value(vn)
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	for _, m := range merges {
		if err := c.merge(out, m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// keyLine returns the line of the first plain key k among the first end
// entries of the mapping node n, 0 if there is none.
func keyLine(n *yaml.Node, k string, end int) int {
	for i := 0; i+1 < len(n.Content) && i < end; i += 2 {
		if kn := deref(n.Content[i]); kn.Kind == yaml.ScalarNode && kn.ShortTag() != "!!merge" && kn.Value == k {
			return kn.Line
		}
	}
	return 0
}

func (c *converter) merge(out map[string]any, m *yaml.Node) error {
	if err := c.visit(m); err != nil {
		return err
	}
	m = deref(m)
	var sources []*yaml.Node
	switch m.Kind {
	case yaml.MappingNode:
		sources = []*yaml.Node{m}
	case yaml.SequenceNode:
		sources = m.Content
	default:
		return c.fail(m, "merge key value must be a mapping or a list of mappings")
	}
	for _, s := range sources {
		if m.Kind == yaml.SequenceNode {
			if err := c.visit(s); err != nil {
				return err
			}
		}
		s = deref(s)
		if s.Kind != yaml.MappingNode {
			return c.fail(s, "merge key value must be a mapping or a list of mappings")
		}
		v, err := c.mapping(s)
		if err != nil {
			return err
		}
		for k, val := range v {
			if _, exists := out[k]; !exists {
				out[k] = val
			}
		}
	}
	return nil
}

// key returns a mapping key, which must be a string.
func (c *converter) key(kn *yaml.Node) (string, error) {
	if kn.Kind != yaml.ScalarNode {
		return "", c.fail(kn, "mapping key is a %s; keys must be strings", kindName(kn.Kind))
	}
	if tag := kn.ShortTag(); tag != "!!str" {
		return "", c.fail(kn, "mapping key %q is %s, not a string; quote it", kn.Value, tagName(tag))
	}
	return kn.Value, nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	default:
		return "value"
	}
}

func tagName(tag string) string {
	switch tag {
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "null"
	case "!!timestamp":
		return "a timestamp"
	default:
		return "tagged " + tag
	}
}

// scalar resolves a scalar as yaml.v3 does for an untyped target, except
// that timestamps stay strings (as in JSON and Kubernetes) and integers are
// int64 (float64 when out of range).
func (c *converter) scalar(n *yaml.Node) (any, error) {
	switch tag := n.ShortTag(); tag {
	case "!!null":
		return nil, nil
	case "!!bool":
		b, ok := parseBool(n.Value)
		if !ok {
			return nil, c.fail(n, "invalid boolean %q", n.Value)
		}
		return b, nil
	case "!!int":
		v, err := parseInt(n.Value)
		if err != nil {
			return nil, c.fail(n, "invalid integer %q", n.Value)
		}
		return v, nil
	case "!!float":
		f, err := parseFloat(n.Value)
		if err != nil {
			return nil, c.fail(n, "%v", err)
		}
		return f, nil
	default:
		// !!str, !!timestamp, !!binary and application tags keep their text.
		return n.Value, nil
	}
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "yes", "on", "y":
		return true, true
	case "false", "no", "off", "n":
		return false, true
	}
	return false, false
}

// parseInt parses YAML integers: decimal, 0x, 0o, 0b and legacy 0777
// octal, with optional sign and underscores.
func parseInt(s string) (any, error) {
	plain := strings.ReplaceAll(s, "_", "")
	if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return i, nil
	}
	if u, err := strconv.ParseUint(strings.TrimPrefix(plain, "+"), 0, 64); err == nil {
		return float64(u), nil
	}
	if f, err := strconv.ParseFloat(plain, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f, nil
	}
	return nil, errors.New("invalid integer")
}

// parseFloat parses YAML floats. Infinity and NaN have no JSON form and no
// place in a Kubernetes object, so they are errors.
func parseFloat(s string) (float64, error) {
	switch strings.ToLower(strings.TrimPrefix(s, "+")) {
	case ".inf", "-.inf", ".nan":
		return 0, fmt.Errorf("number %s has no JSON representation", s)
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err == nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
		return 0, fmt.Errorf("number %s has no JSON representation", s)
	}
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && errors.Is(ne.Err, strconv.ErrRange) {
			return 0, fmt.Errorf("number %s is out of range", s)
		}
		return 0, fmt.Errorf("invalid number %q", s)
	}
	return f, nil
}
