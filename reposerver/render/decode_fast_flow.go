package render

import (
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// The scalars and flow collections fastYAML reads on one line.

// quoted reads the single- or double-quoted scalar starting at column at
// of line: its value and the column after the closing quote. A scalar
// that does not close on the line, or a double-quoted one with an
// escape, is not read.
func quoted(line []byte, at int) (string, int, bool) {
	q := line[at]
	var b []byte
	for i := at + 1; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && q == '"':
			return "", 0, false
		case c == q && q == '\'' && i+1 < len(line) && line[i+1] == '\'':
			b = append(b, '\'')
			i++
		case c == q:
			return string(b), i + 1, true
		default:
			b = append(b, c)
		}
	}
	return "", 0, false
}

// quoteStyle is the node style of a scalar quoted with q.
func quoteStyle(q byte) yaml.Style {
	if q == '"' {
		return yaml.DoubleQuotedStyle
	}
	return yaml.SingleQuotedStyle
}

// plainStart reports whether a plain scalar may start at column i of
// line: not with an indicator, except "-", "?" and ":" followed by a
// non-space.
func plainStart(line []byte, i int) bool {
	switch line[i] {
	case '[', ']', '{', '}', ',', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	case '-', '?', ':':
		return i+1 < len(line) && line[i+1] != ' '
	}
	return true
}

// flow parses a flow collection written on one line.
type flow struct {
	p    *fastParser
	line []byte
	i    int
	row  int
}

func (f *flow) spaces() {
	for f.i < len(f.line) && f.line[f.i] == ' ' {
		f.i++
	}
}

// node parses a flow node at f.i.
func (f *flow) node() (*yaml.Node, bool) {
	f.spaces()
	if f.i >= len(f.line) {
		return nil, false
	}
	pos := f.i
	c := f.line[f.i]
	switch c {
	case '[', '{':
		if f.p.depth++; f.p.depth > maxFastDepth {
			return nil, false
		}
		defer func() { f.p.depth-- }()
		n := f.p.node(yaml.SequenceNode, f.row, pos+1)
		n.Tag, n.Style = "!!seq", yaml.FlowStyle
		base := len(f.p.a.stack)
		closer := byte(']')
		if c == '{' {
			n.Kind, n.Tag, closer = yaml.MappingNode, "!!map", '}'
		}
		f.i++
		for {
			f.spaces()
			if f.i >= len(f.line) {
				return nil, false
			}
			if f.line[f.i] == closer {
				f.i++
				n.Content = f.p.a.content(base)
				return n, true
			}
			item, ok := f.node()
			if !ok {
				return nil, false
			}
			if c == '{' {
				f.spaces()
				if f.i >= len(f.line) || f.line[f.i] != ':' || item.Kind != yaml.ScalarNode || f.i-(item.Column-1) > maxKey {
					return nil, false
				}
				f.i++
				if f.i < len(f.line) && f.line[f.i] != ' ' {
					return nil, false
				}
				val, ok := f.node()
				if !ok {
					return nil, false
				}
				f.p.a.push(item, val)
			} else {
				f.spaces()
				if f.i < len(f.line) && f.line[f.i] == ':' {
					return nil, false // a single-pair mapping in a sequence
				}
				f.p.a.push(item)
			}
			f.spaces()
			if f.i >= len(f.line) {
				return nil, false
			}
			switch f.line[f.i] {
			case ',':
				f.i++
				f.spaces()
				if f.i < len(f.line) && (f.line[f.i] == ',' || f.line[f.i] == closer) {
					return nil, false
				}
			case closer:
			default:
				return nil, false
			}
		}
	case '"', '\'':
		v, e, ok := quoted(f.line, f.i)
		if !ok {
			return nil, false
		}
		f.i = e
		n := f.p.node(yaml.ScalarNode, f.row, pos+1)
		n.Tag, n.Style, n.Value = "!!str", quoteStyle(c), v
		return n, true
	}
	if !plainStart(f.line, f.i) || c == ':' || c == '?' {
		return nil, false
	}
	for f.i < len(f.line) {
		c := f.line[f.i]
		if c == ',' || c == '[' || c == ']' || c == '{' || c == '}' || (c == '#' && f.line[f.i-1] == ' ') {
			break
		}
		if c == ':' && (f.i+1 == len(f.line) || strings.IndexByte(" ,]}", f.line[f.i+1]) >= 0) {
			break
		}
		f.i++
	}
	n := f.p.node(yaml.ScalarNode, f.row, pos+1)
	if n.Value = f.p.str(f.row-1, pos, f.i); n.Value == "" {
		return nil, false
	}
	n.Tag = plainTag(n)
	return n, true
}
