package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// originAnnotations is the buildMetadata option that makes kustomize
// annotate every resource with the file it came from.
const originAnnotations = "originAnnotations"

// editKustomization returns the kustomization data with the Argo CD
// kustomize options applied, as `kustomize edit` would write them, with
// components the resolved Components, and buildMetadata asking for origin
// annotations. added reports whether the origin annotations were added by
// us (and must be stripped from the output) rather than asked for by the
// kustomization itself.
func editKustomization(data []byte, o *KustomizeOptions, components []string) (out []byte, added bool, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, false, fmt.Errorf("parse kustomization: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.ShortTag() == "!!null" {
		*top = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	if top.Kind != yaml.MappingNode {
		return nil, false, errors.New("parse kustomization: not a mapping")
	}
	if o != nil {
		if err := applyKustomizeOptions(top, o, components); err != nil {
			return nil, false, fmt.Errorf("edit kustomization: %w", err)
		}
	}
	added = addBuildMetadata(top, originAnnotations)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, false, fmt.Errorf("write kustomization: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, false, fmt.Errorf("write kustomization: %w", err)
	}
	return buf.Bytes(), added, nil
}

// applyKustomizeOptions edits the kustomization mapping like Argo CD's
// kustomize.Build, in its order: `kustomize edit set nameprefix`,
// `namesuffix`, `image`, `replicas`, `kustomize edit add label` and
// `annotation` (--force, --without-selector, --include-templates as the
// options say), `set namespace`, then patches appended to the file and
// `kustomize edit add component`.
func applyKustomizeOptions(top *yaml.Node, o *KustomizeOptions, components []string) error {
	if o.NamePrefix != "" {
		setField(top, "namePrefix", strNode(o.NamePrefix))
	}
	if o.NameSuffix != "" {
		setField(top, "nameSuffix", strNode(o.NameSuffix))
	}
	if len(o.Images) > 0 {
		if err := setImages(top, o.Images); err != nil {
			return err
		}
	}
	if err := setReplicas(top, o.Replicas); err != nil {
		return err
	}
	if o.LabelWithoutSelector {
		if err := addLabelsEntry(top, o.CommonLabels, o.LabelIncludeTemplates); err != nil {
			return err
		}
	} else if err := addToMap(top, "commonLabels", "label", o.CommonLabels, o.ForceCommonLabels); err != nil {
		return err
	}
	if err := addToMap(top, "commonAnnotations", "annotation", o.CommonAnnotations, o.ForceCommonAnnotations); err != nil {
		return err
	}
	if o.Namespace != "" {
		setField(top, "namespace", strNode(o.Namespace))
	}
	if err := appendPatches(top, o.Patches); err != nil {
		return err
	}
	return addComponents(top, components)
}

func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// setField sets key in the mapping m to v, replacing an existing value.
func setField(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, strNode(key), v)
}

// field returns the value of key in the mapping m, aliases followed, or nil.
func field(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return deref(m.Content[i+1])
		}
	}
	return nil
}

// addToMap adds kv to the string map at key like `kustomize edit add
// label` (what "label" or "annotation"): a key the map already has is an
// error unless force, which overwrites it.
func addToMap(top *yaml.Node, key, what string, kv map[string]string, force bool) error {
	if len(kv) == 0 {
		return nil
	}
	m := field(top, key)
	if m == nil || (m.Kind == yaml.ScalarNode && m.ShortTag() == "!!null") {
		m = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		setField(top, key, m)
	}
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("%s is not a mapping", key)
	}
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		if k == "" {
			return fmt.Errorf("%s: empty key", key)
		}
		if field(m, k) != nil && !force {
			return fmt.Errorf("%s %s already in kustomization file (set force%s to overwrite it)", what, k, map[string]string{"label": "CommonLabels", "annotation": "CommonAnnotations"}[what])
		}
		setField(m, k, strNode(kv[k]))
	}
	return nil
}

// addLabelsEntry appends one labels entry holding kv, which kustomize
// applies to metadata only, and to pod templates too with includeTemplates:
// `kustomize edit add label --without-selector [--include-templates]`.
func addLabelsEntry(top *yaml.Node, kv map[string]string, includeTemplates bool) error {
	if len(kv) == 0 {
		return nil
	}
	pairs := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		if k == "" {
			return errors.New("labels: empty key")
		}
		setField(pairs, k, strNode(kv[k]))
	}
	entry := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	setField(entry, "pairs", pairs)
	if includeTemplates {
		setField(entry, "includeTemplates", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	}
	seq, err := sequence(top, "labels")
	if err != nil {
		return err
	}
	seq.Content = append(seq.Content, entry)
	return nil
}

// setReplicas sets replicas like `kustomize edit set replicas`: an entry of
// the same name is replaced, others are appended.
func setReplicas(top *yaml.Node, replicas []KustomizeReplica) error {
	if len(replicas) == 0 {
		return nil
	}
	seq, err := sequence(top, "replicas")
	if err != nil {
		return err
	}
	for _, r := range replicas {
		entry := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		setField(entry, "name", strNode(r.Name))
		setField(entry, "count", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(r.Count)})
		replaced := false
		for i, item := range seq.Content {
			if item = deref(item); item.Kind == yaml.MappingNode && scalarField(item, "name") == r.Name {
				seq.Content[i], replaced = entry, true
			}
		}
		if !replaced {
			seq.Content = append(seq.Content, entry)
		}
	}
	return nil
}

// appendPatches appends patches to the kustomization's patches list, as
// Argo CD does by rewriting the file (kustomize edit has no command for it).
func appendPatches(top *yaml.Node, patches []KustomizePatch) error {
	if len(patches) == 0 {
		return nil
	}
	seq, err := sequence(top, "patches")
	if err != nil {
		return err
	}
	for _, p := range patches {
		data, err := json.Marshal(p)
		if err != nil {
			return fmt.Errorf("encode patch: %w", err)
		}
		var n yaml.Node
		if err := yaml.Unmarshal(data, &n); err != nil {
			return fmt.Errorf("encode patch: %w", err)
		}
		seq.Content = append(seq.Content, n.Content[0])
	}
	return nil
}

// addComponents appends components not already listed, like `kustomize
// edit add component`.
func addComponents(top *yaml.Node, components []string) error {
	if len(components) == 0 {
		return nil
	}
	seq, err := sequence(top, "components")
	if err != nil {
		return err
	}
	for _, c := range components {
		if !slices.ContainsFunc(seq.Content, func(n *yaml.Node) bool { return deref(n).Value == c }) {
			seq.Content = append(seq.Content, strNode(c))
		}
	}
	return nil
}

// sequence returns the list at key, created when absent or null.
func sequence(top *yaml.Node, key string) (*yaml.Node, error) {
	seq := field(top, key)
	if seq == nil || (seq.Kind == yaml.ScalarNode && seq.ShortTag() == "!!null") {
		seq = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		setField(top, key, seq)
	}
	if seq.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s is not a list", key)
	}
	return seq, nil
}

// addBuildMetadata adds opt to buildMetadata unless present, reporting
// whether it added it.
func addBuildMetadata(top *yaml.Node, opt string) bool {
	bm := field(top, "buildMetadata")
	if bm == nil || bm.Kind != yaml.SequenceNode {
		bm = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		setField(top, "buildMetadata", bm)
	}
	for _, item := range bm.Content {
		if deref(item).Value == opt {
			return false
		}
	}
	bm.Content = append(bm.Content, strNode(opt))
	return true
}

// kustomizeImage is one entry of a kustomization's images list.
type kustomizeImage struct {
	Name, NewName, NewTag, Digest string
	// node is the entry as written, kept when the entry is not replaced so
	// that fields we do not know survive.
	node *yaml.Node
}

// preserve is the `kustomize edit set image` placeholder that keeps the
// current value of a field.
const preserve = "*"

// setImages applies images like `kustomize edit set image`: an argument
// replaces the entry of the same name (fields given as "*" keep the current
// value), other entries stay, and the list is sorted by name.
func setImages(top *yaml.Node, args []string) error {
	byName := map[string]kustomizeImage{}
	for _, a := range args {
		img, err := parseImageArg(a)
		if err != nil {
			return fmt.Errorf("image %q: %w", a, err)
		}
		byName[img.Name] = img
	}
	if cur := field(top, "images"); cur != nil && cur.Kind == yaml.SequenceNode {
		for _, item := range cur.Content {
			item = deref(item)
			if item.Kind != yaml.MappingNode {
				continue
			}
			old := kustomizeImage{
				Name:    scalarField(item, "name"),
				NewName: scalarField(item, "newName"),
				NewTag:  scalarField(item, "newTag"),
				Digest:  scalarField(item, "digest"),
				node:    item,
			}
			arg, ok := byName[old.Name]
			if !ok {
				byName[old.Name] = old
				continue
			}
			if arg.NewName == preserve {
				arg.NewName = old.NewName
			}
			if arg.NewTag == preserve {
				arg.NewTag = old.NewTag
			}
			if arg.Digest == preserve {
				arg.Digest = old.Digest
			}
			byName[old.Name] = arg
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, n := range names {
		img := byName[n]
		if img.node != nil {
			seq.Content = append(seq.Content, img.node)
			continue
		}
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, f := range []struct{ k, v string }{
			{"name", img.Name}, {"newName", img.NewName}, {"newTag", img.NewTag}, {"digest", img.Digest},
		} {
			if f.v != "" && f.v != preserve {
				m.Content = append(m.Content, strNode(f.k), strNode(f.v))
			}
		}
		seq.Content = append(seq.Content, m)
	}
	setField(top, "images", seq)
	return nil
}

func scalarField(m *yaml.Node, key string) string {
	if v := field(m, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// imageTag matches "<image>:<tag>"; the tag cannot hold '/' so a registry
// port is not taken for a tag.
var imageTag = regexp.MustCompile(`^(.*):([a-zA-Z0-9._-]*|\*)$`)

var errImageFormat = errors.New("invalid image, use one of: <image>=<newimage>:<newtag>, <image>=<newimage>@<digest>, <image>=<newimage>, <image>:<newtag>, <image>@<digest>")

// parseImageArg parses an argument of `kustomize edit set image`.
func parseImageArg(arg string) (kustomizeImage, error) {
	if name, repl, ok := strings.Cut(arg, "="); ok && !strings.Contains(repl, "=") {
		if name == "" {
			return kustomizeImage{}, errImageFormat
		}
		n, tag, digest, err := splitImage(repl, true)
		return kustomizeImage{Name: name, NewName: n, NewTag: tag, Digest: digest}, err
	}
	n, tag, digest, err := splitImage(arg, false)
	return kustomizeImage{Name: n, NewTag: tag, Digest: digest}, err
}

func splitImage(s string, nameOnlyOK bool) (name, tag, digest string, err error) {
	if n, d, ok := strings.Cut(s, "@"); ok {
		if n == "" || d == "" {
			return "", "", "", errImageFormat
		}
		return n, "", d, nil
	}
	if m := imageTag.FindStringSubmatch(s); m != nil && m[1] != "" {
		return m[1], m[2], "", nil
	}
	if s != "" && nameOnlyOK {
		return s, "", "", nil
	}
	return "", "", "", errImageFormat
}
