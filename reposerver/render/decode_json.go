package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// parseJSON reads a stream of JSON values into the same node trees the YAML
// parser produces, with line numbers, so both formats share conversion,
// validation and LineOf.
func parseJSON(data []byte) ([]*yaml.Node, error) {
	p := jsonParser{data: data, dec: json.NewDecoder(bytes.NewReader(data)), lines: newLineIndex(data)}
	p.dec.UseNumber()
	var docs []*yaml.Node
	for {
		if p.skip() >= len(data) {
			return docs, nil
		}
		n, err := p.value(1)
		if err != nil {
			return nil, p.error(len(docs), err)
		}
		docs = append(docs, &yaml.Node{Kind: yaml.DocumentNode, Line: n.Line, Column: n.Column, Content: []*yaml.Node{n}})
	}
}

type jsonParser struct {
	data  []byte
	dec   *json.Decoder
	lines lineIndex
}

// skip returns the offset of the next token: past whitespace and the
// separators that json.Decoder.Token consumes silently.
func (p *jsonParser) skip() int {
	i := int(p.dec.InputOffset())
	for i < len(p.data) {
		switch p.data[i] {
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
		default:
			return i
		}
	}
	return i
}

func (p *jsonParser) value(depth int) (*yaml.Node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nesting deeper than %d levels", maxDepth)
	}
	line, col := p.lines.position(p.skip())
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line, Column: col}
			for p.dec.More() {
				kline, kcol := p.lines.position(p.skip())
				ktok, err := p.dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := ktok.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				v, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: key, Line: kline, Column: kcol}
				n.Content = append(n.Content, k, v)
			}
			if _, err := p.dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		case '[':
			n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: line, Column: col}
			for p.dec.More() {
				v, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, v)
			}
			if _, err := p.dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		default:
			return nil, fmt.Errorf("unexpected %q", rune(t))
		}
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: t, Line: line, Column: col}, nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(t.String(), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String(), Line: line, Column: col}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t), Line: line, Column: col}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null", Line: line, Column: col}, nil
	default:
		return nil, fmt.Errorf("unexpected JSON token %v", tok)
	}
}

// error turns a json error into a DecodeError with a line number.
func (p *jsonParser) error(index int, err error) *DecodeError {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		line, _ := p.lines.position(int(se.Offset))
		return &DecodeError{Index: index, Line: line, Err: fmt.Errorf("invalid JSON: %w", err)}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		line, _ := p.lines.position(len(p.data))
		return &DecodeError{Index: index, Line: line, Err: errors.New("invalid JSON: unexpected end of input")}
	default:
		line, _ := p.lines.position(int(p.dec.InputOffset()))
		return &DecodeError{Index: index, Line: line, Err: fmt.Errorf("invalid JSON: %w", err)}
	}
}

// lineIndex maps byte offsets to 1-based lines and columns.
type lineIndex []int

func newLineIndex(data []byte) lineIndex {
	var nl lineIndex
	for i, b := range data {
		if b == '\n' {
			nl = append(nl, i)
		}
	}
	return nl
}

func (li lineIndex) position(off int) (line, col int) {
	i := sort.SearchInts(li, off) // newlines before off
	start := 0
	if i > 0 {
		start = li[i-1] + 1
	}
	return i + 1, off - start + 1
}
