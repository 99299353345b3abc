package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// Document is one Kubernetes object read from a repository, with where it
// came from.
type Document struct {
	// Object is the decoded object: map[string]any, []any, string, int64,
	// float64, bool and nil values.
	Object map[string]any
	// File is the path a reviewer edits, slash-separated and relative to the
	// repository root when known. For rendered objects it is the source the
	// object came from (the kustomize resource file or generator, the Helm
	// template).
	File string
	// Index is the 0-based index of the YAML/JSON document within File. The
	// items of a List share the index of the List document. For a Helm
	// template it counts the documents that template rendered.
	Index int
	// Line is the 1-based line where the document (or List item) starts in
	// File, 0 when unknown (rendered templates).
	Line int
	// Rendered is true for the output of kustomize, Helm or Jsonnet.
	Rendered bool
	// Origin is "kustomize", "helm", "jsonnet", or "" for a raw manifest.
	Origin string

	node *yaml.Node
}

// Note is a remark about input that was skipped rather than rejected, such
// as a values.yaml or a CI file next to the manifests.
type Note struct {
	File string
	// Index is the 0-based document index, -1 when the note is about the
	// whole file.
	Index int
	// Line is 1-based, 0 when unknown.
	Line    int
	Message string
}

// Limits bounds the work done on untrusted input. A zero field means its
// default (see DefaultLimits).
type Limits struct {
	// MaxFileBytes is the largest file read or decoded; default 16 MiB.
	MaxFileBytes int64
	// MaxNodes is the most YAML nodes one file may expand to, counting
	// every expansion of an alias; default 1,000,000. It stops alias bombs.
	MaxNodes int
}

// Default limits.
const (
	DefaultMaxFileBytes int64 = 16 << 20
	DefaultMaxNodes           = 1_000_000
	// maxDepth is the deepest nesting accepted, after alias expansion. It
	// matches the YAML parser's own limit.
	maxDepth = 10_000
)

// DefaultLimits returns the limits used when none are given.
func DefaultLimits() Limits {
	return Limits{MaxFileBytes: DefaultMaxFileBytes, MaxNodes: DefaultMaxNodes}
}

func (l Limits) withDefaults() Limits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = DefaultMaxNodes
	}
	return l
}

// Errors wrapped by DecodeError (and by rendering) that callers may test
// with errors.Is.
var (
	ErrFileTooLarge = errors.New("file too large")
	ErrBinaryFile   = errors.New("binary file")
	ErrTooManyNodes = errors.New("too many YAML nodes")
)

// DecodeError is a file that cannot be decoded into Kubernetes objects.
type DecodeError struct {
	File string
	// Index is the 0-based document index, or -1 when the error concerns
	// the whole file.
	Index int
	// Line is the 1-based line of the error, 0 when unknown.
	Line int
	Err  error
}

// Error formats the error as `file.yaml: document 2 (line 14): message`.
// Documents are counted from 1 in the message, like lines.
func (e *DecodeError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	switch {
	case e.Index >= 0 && e.Line > 0:
		fmt.Fprintf(&b, ": document %d (line %d)", e.Index+1, e.Line)
	case e.Index >= 0:
		fmt.Fprintf(&b, ": document %d", e.Index+1)
	case e.Line > 0:
		fmt.Fprintf(&b, ": line %d", e.Line)
	}
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *DecodeError) Unwrap() error { return e.Err }

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Decode decodes the YAML or JSON stream data, read from the file name, into
// Kubernetes objects. Empty documents are skipped; documents that are not
// Kubernetes objects (not a mapping, or a mapping with neither apiVersion nor
// kind) are skipped with a Note; `kind: List` documents are flattened into
// their items. Any other problem is a *DecodeError. A name ending in .json is
// decoded as a stream of JSON values.
func Decode(name string, data []byte, lim Limits) ([]Document, []Note, error) {
	return decodeData(name, data, lim, jsonName(name), false)
}

// jsonName reports whether a file named name is decoded as JSON.
func jsonName(name string) bool { return strings.HasSuffix(strings.ToLower(name), ".json") }

// decodeData is Decode with the format chosen by the caller; with lines
// the documents keep their syntax trees for LineOf.
func decodeData(name string, data []byte, lim Limits, asJSON, lines bool) ([]Document, []Note, error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.MaxFileBytes {
		return nil, nil, &DecodeError{File: name, Index: -1,
			Err: fmt.Errorf("%w: %d bytes, limit is %d", ErrFileTooLarge, len(data), lim.MaxFileBytes)}
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return nil, nil, &DecodeError{File: name, Index: -1,
			Err: fmt.Errorf("%w: not UTF-8 text", ErrBinaryFile)}
	}
	var docs []*yaml.Node
	var err error
	if asJSON {
		docs, err = parseJSON(data)
	} else {
		var a *arena
		if lines {
			a = new(arena) // the documents keep its nodes
		} else {
			a = arenas.Get().(*arena)
			defer func() {
				a.reset()
				arenas.Put(a)
			}()
		}
		docs, err = parseYAML(data, a)
		if err != nil && looksLikeJSON(data) {
			// libyaml rejects a few JSON escapes (\/, surrogate pairs).
			if jdocs, jerr := parseJSON(data); jerr == nil {
				docs, err = jdocs, nil
			}
		}
	}
	if err != nil {
		var de *DecodeError
		if errors.As(err, &de) {
			de.File = name
		}
		return nil, nil, err
	}
	d := decoder{file: name, limit: lim.MaxNodes, budget: lim.MaxNodes, lines: lines}
	for i, doc := range docs {
		if err := d.document(i, doc); err != nil {
			return nil, nil, err
		}
	}
	return d.docs, d.notes, nil
}

// DecodeFile reads path (relative to root, or absolute inside it) and
// decodes it like Decode. The file must be a regular file inside root after
// symlink resolution and no larger than lim.MaxFileBytes. Documents name the
// file by its slash-separated path relative to root. Every error is a
// *DecodeError naming the file.
func DecodeFile(root, path string, lim Limits) ([]Document, []Note, error) {
	return decodeFileIn(root, path, lim, false)
}

// DecodeFileLines is DecodeFile for documents whose LineOf finds the
// lines of their fields: they keep the file's syntax tree, several times
// the memory of their objects, where the others let it go.
func DecodeFileLines(root, path string, lim Limits) ([]Document, []Note, error) {
	return decodeFileIn(root, path, lim, true)
}

func decodeFileIn(root, path string, lim Limits, lines bool) ([]Document, []Note, error) {
	lim = lim.withDefaults()
	r, err := openRepo(root)
	if err != nil {
		return nil, nil, &DecodeError{File: path, Index: -1, Err: err}
	}
	return r.decodeFile(path, lim, lines)
}

// decodeFile is DecodeFile (DecodeFileLines with lines) inside an opened
// repo.
func (r repo) decodeFile(path string, lim Limits, lines bool) ([]Document, []Note, error) {
	real, rel, err := r.resolve(path)
	if err != nil {
		return nil, nil, &DecodeError{File: filepathOrRel(path, rel), Index: -1, Err: err}
	}
	data, err := readFile(real, lim.MaxFileBytes)
	if err != nil {
		return nil, nil, &DecodeError{File: rel, Index: -1, Err: err}
	}
	return decodeData(rel, data, lim, jsonName(rel), lines)
}

func filepathOrRel(path, rel string) string {
	if rel != "" {
		return rel
	}
	return path
}

var yamlLineErr = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)

// parserErrors are the messages of yaml.v3's parser (as opposed to its
// scanner). yaml.v3 reports their line 0-based, and leaves it out for the
// first line.
var parserErrors = []string{
	"did not find expected",
	"found undefined tag handle",
	"found duplicate %YAML directive",
	"found duplicate %TAG directive",
	"found incompatible YAML document",
}

// parseYAML splits data into YAML document nodes: fastYAML's, cut from
// a, when it reads data, else yaml.v3's.
func parseYAML(data []byte, a *arena) ([]*yaml.Node, error) {
	if docs, ok := fastYAML(data, a); ok {
		return docs, nil
	}
	docs, err := parseYAMLv3(data)
	if err != nil {
		return nil, yamlError(len(docs), err, data)
	}
	return docs, nil
}

// parseYAMLv3 splits data into document nodes with yaml.v3; on an error
// it returns the documents before the one that failed.
func parseYAMLv3(data []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		n := new(yaml.Node)
		err := dec.Decode(n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, err
		}
		docs = append(docs, n)
	}
}

// yamlError turns a parser error into a DecodeError with a 1-based line
// number taken out of the message.
func yamlError(index int, err error, data []byte) *DecodeError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLineErr.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	for _, p := range parserErrors {
		if strings.HasPrefix(msg, p) {
			line++
			break
		}
	}
	// An error at the end of the input is reported on the line after the
	// last one.
	lines := bytes.Count(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		lines++
	}
	if line > lines {
		line = lines
	}
	return &DecodeError{Index: index, Line: line, Err: errors.New(msg)}
}

func looksLikeJSON(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}
