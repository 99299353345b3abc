package render

import (
	"bytes"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// fastYAML parses data into the document nodes yaml.v3 would give it, when
// data keeps to the YAML that Kubernetes manifests are written in: block
// mappings and sequences indented with spaces, plain, single- and
// double-quoted (without escapes) scalars on one line, flow collections on
// one line, literal block scalars, comments, and "---" between documents.
// Anything else (anchors, aliases, tags, folded or multi-line scalars,
// escapes, tabs, carriage returns and other control characters, non-ASCII
// text, directives, empty
// documents, a document that is not a mapping) makes it give up (ok is
// false) so that yaml.v3 parses the whole input, errors included. The
// nodes differ from yaml.v3's only in carrying no comments, which nothing
// that decodes manifests reads. It exists because yaml.v3's parser is most
// of the time of reading a large repository (TestFastYAMLMatchesYAMLv3
// holds the two to the same trees).
func fastYAML(data []byte, a *arena) (docs []*yaml.Node, ok bool) {
	for _, c := range data {
		if (c < ' ' && c != '\n') || c >= 0x7f {
			return nil, false
		}
	}
	p := &fastParser{lines: bytes.Split(data, []byte("\n")), text: string(data), a: a}
	p.offs = make([]int, len(p.lines))
	for i, off := 0, 0; i < len(p.lines); i++ {
		p.offs[i] = off
		off += len(p.lines[i]) + 1
	}
	if n := len(p.lines); n > 0 && len(p.lines[n-1]) == 0 {
		p.lines = p.lines[:n-1]
	} else {
		p.unterminated = true
	}
	for _, line := range p.lines {
		// A marker with content after it, or a document end.
		marker := bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("..."))
		if marker && (len(line) == 3 || line[3] == ' ') && !isDocStart(line) || bytes.HasPrefix(line, []byte("...")) {
			return nil, false
		}
	}
	for {
		p.skip()
		if p.pos >= len(p.lines) {
			break
		}
		docLine := p.pos + 1
		explicit := isDocStart(p.lines[p.pos])
		if explicit {
			p.pos++
			p.skip()
			if p.pos >= len(p.lines) || isDocStart(p.lines[p.pos]) {
				return nil, false // an empty document
			}
		} else if len(docs) > 0 {
			return nil, false
		}
		line := p.lines[p.pos]
		if indent(line) != 0 || line[0] == '-' || line[0] == '%' || bytes.HasPrefix(line, []byte("...")) {
			return nil, false
		}
		body, ok := p.mapping(0, 0)
		if !ok {
			return nil, false
		}
		if !explicit {
			docLine = body.Line
		}
		doc := p.node(yaml.DocumentNode, docLine, 1)
		doc.Content = p.a.ptrs.take(1)
		doc.Content[0] = body
		docs = append(docs, doc)
		p.skip()
		if p.pos < len(p.lines) && !isDocStart(p.lines[p.pos]) {
			return nil, false
		}
	}
	return docs, len(docs) > 0
}

// isDocStart reports whether line is a "---" marker alone (a comment may
// follow it).
func isDocStart(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	return onlyComment(line, 3) && (len(line) == 3 || line[3] == ' ')
}

// onlyComment reports whether line holds nothing from column i on but
// spaces and a comment (whose "#" follows a space).
func onlyComment(line []byte, i int) bool {
	rest := bytes.TrimLeft(line[i:], " ")
	if len(rest) == 0 {
		return true
	}
	return rest[0] == '#' && (len(rest) < len(line[i:]) || (i > 0 && line[i-1] == ' '))
}

// indent returns the number of leading spaces of line.
func indent(line []byte) int {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return n
}

// fastParser walks the lines of one input.
type fastParser struct {
	lines [][]byte
	// pos is the current line; col, when above its indentation, where
	// its content starts (after a sequence item's "- ").
	pos, col int
	// unterminated: the last line has no line break.
	unterminated bool
	// text is the input as one string, which scalars' values are cut
	// from; offs are where each line starts in it.
	text string
	offs []int
	// a holds the nodes.
	a *arena
	// depth is how many collections enclose the one being read.
	depth int
}

// maxFastDepth is how deeply collections may nest before fastYAML leaves
// the input to yaml.v3, which has its own limit and error.
const maxFastDepth = 500

// maxKey is how long an implicit key may be before fastYAML leaves the
// input to yaml.v3, which refuses keys past 1,024 characters.
const maxKey = 1000

// node returns a new node.
func (p *fastParser) node(kind yaml.Kind, line, column int) *yaml.Node {
	n := p.a.node()
	n.Kind, n.Line, n.Column = kind, line, column
	return n
}

// str returns columns i to j of line row (0-based), spaces at the end
// left out, as a string cut from the input.
func (p *fastParser) str(row, i, j int) string {
	line := p.lines[row]
	for j > i && line[j-1] == ' ' {
		j--
	}
	return p.text[p.offs[row]+i : p.offs[row]+j]
}

// plainTag is the tag yaml.v3 resolves plain scalar n to: a value whose
// first character hints at no other type is a string without asking
// it.
func plainTag(n *yaml.Node) string {
	if v := n.Value; v != "" && strings.IndexByte("+-0123456789yYnNtTfFoO~<.", v[0]) < 0 {
		return "!!str"
	}
	return n.ShortTag()
}

// skip moves past blank and comment lines.
func (p *fastParser) skip() {
	for p.pos < len(p.lines) {
		line := p.lines[p.pos]
		i := indent(line)
		if i < len(line) && line[i] != '#' {
			return
		}
		p.pos++
		p.col = 0
	}
}

// start returns the column the current line's content starts at.
func (p *fastParser) start() int {
	return max(indent(p.lines[p.pos]), p.col)
}

// mapping parses a block mapping whose keys start at column at (0-based)
// from the current line; parent is the column its entries must be
// deeper than to continue a value.
func (p *fastParser) mapping(at, parent int) (*yaml.Node, bool) {
	if p.depth++; p.depth > maxFastDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	m := p.node(yaml.MappingNode, p.pos+1, at+1)
	m.Tag = "!!map"
	base := len(p.a.stack)
	for {
		p.skip()
		if p.pos >= len(p.lines) || p.start() != at || isDocStart(p.lines[p.pos]) {
			break
		}
		line := p.lines[p.pos]
		if line[at] == '-' && (at+1 == len(line) || line[at+1] == ' ') {
			break
		}
		key, rest, ok := p.key(line, at)
		if !ok {
			return nil, false
		}
		val, ok := p.value(rest, at, true)
		if !ok {
			return nil, false
		}
		p.a.push(key, val)
	}
	if m.Content = p.a.content(base); len(m.Content) == 0 {
		return nil, false
	}
	p.skip()
	if p.pos < len(p.lines) && !isDocStart(p.lines[p.pos]) && p.start() > parent && p.start() != at {
		return nil, false // indented in a way this parser does not follow
	}
	return m, true
}

// key reads the key of the mapping entry at column at of line, and
// returns the column its value starts at (after ":" and spaces, or the
// line's length).
func (p *fastParser) key(line []byte, at int) (*yaml.Node, int, bool) {
	n := p.node(yaml.ScalarNode, p.pos+1, at+1)
	var end int
	switch line[at] {
	case '"', '\'':
		v, e, ok := quoted(line, at)
		if !ok {
			return nil, 0, false
		}
		n.Value, end = v, e
		n.Tag, n.Style = "!!str", quoteStyle(line[at])
	default:
		if !plainStart(line, at) {
			return nil, 0, false
		}
		i := at
		for i < len(line) && !(line[i] == ':' && (i+1 == len(line) || line[i+1] == ' ')) {
			if line[i] == '#' && line[i-1] == ' ' {
				return nil, 0, false
			}
			i++
		}
		v := p.str(p.pos, at, i)
		if v == "<<" || strings.ContainsAny(v, "{}[],") {
			return nil, 0, false
		}
		n.Value, end = v, i
		n.Tag = plainTag(n)
	}
	if end >= len(line) || line[end] != ':' || (end+1 < len(line) && line[end+1] != ' ') || end-at > maxKey {
		return nil, 0, false
	}
	rest := end + 1
	for rest < len(line) && line[rest] == ' ' {
		rest++
	}
	return n, rest, true
}

// value parses the value of an entry (inMap) or sequence item whose key
// or dash is at column at, written from column from of the current line
// on (the line's end when it is on the next lines).
func (p *fastParser) value(from, at int, inMap bool) (*yaml.Node, bool) {
	line := p.lines[p.pos]
	if from >= len(line) || line[from] == '#' {
		// On the next lines: a deeper block, a sequence at the key's
		// column, or nothing (null).
		// A null is placed right after the ":" or "-".
		emptyLine, emptyCol := p.pos+1, from+1
		for emptyCol > 1 && line[emptyCol-2] == ' ' {
			emptyCol--
		}
		p.pos++
		p.col = 0
		p.skip()
		if p.pos < len(p.lines) && !isDocStart(p.lines[p.pos]) {
			next := p.lines[p.pos]
			i := indent(next)
			isSeq := next[i] == '-' && (i+1 == len(next) || next[i+1] == ' ')
			switch {
			case i > at && isSeq:
				return p.sequence(i, at)
			case i > at:
				return p.mapping(i, at)
			case i == at && inMap && isSeq:
				return p.sequence(i, at-1)
			}
		}
		if from < len(line) {
			return nil, false // a comment where yaml.v3 places the null differently
		}
		n := p.node(yaml.ScalarNode, emptyLine, emptyCol)
		n.Tag = "!!null"
		return n, true
	}
	var n *yaml.Node
	end := len(line)
	switch c := line[from]; c {
	case '"', '\'':
		v, e, ok := quoted(line, from)
		if !ok {
			return nil, false
		}
		n = p.node(yaml.ScalarNode, p.pos+1, from+1)
		n.Tag, n.Style, n.Value = "!!str", quoteStyle(c), v
		end = e
	case '[', '{':
		f := flow{p: p, line: line, i: from, row: p.pos + 1}
		var ok bool
		if n, ok = f.node(); !ok {
			return nil, false
		}
		end = f.i
	case '|':
		return p.literal(from, at)
	default:
		if !plainStart(line, from) {
			return nil, false
		}
		i := from
		for i < len(line) && !(line[i] == '#' && line[i-1] == ' ') {
			if line[i] == ':' && (i+1 == len(line) || line[i+1] == ' ') {
				return nil, false // a mapping on the same line
			}
			i++
		}
		n = p.node(yaml.ScalarNode, p.pos+1, from+1)
		n.Value = p.str(p.pos, from, i)
		n.Tag = plainTag(n)
		end = i
	}
	if !onlyComment(line, end) {
		return nil, false
	}
	p.pos++
	p.col = 0
	p.skip()
	if p.pos < len(p.lines) && !isDocStart(p.lines[p.pos]) && indent(p.lines[p.pos]) > at {
		return nil, false // a scalar continued on the next line
	}
	return n, true
}

// sequence parses a block sequence whose dashes are at column at; parent
// is the column its items must be deeper than to continue.
func (p *fastParser) sequence(at, parent int) (*yaml.Node, bool) {
	if p.depth++; p.depth > maxFastDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	s := p.node(yaml.SequenceNode, p.pos+1, at+1)
	s.Tag = "!!seq"
	base := len(p.a.stack)
	for {
		p.skip()
		if p.pos >= len(p.lines) || isDocStart(p.lines[p.pos]) || p.start() != at {
			break
		}
		line := p.lines[p.pos]
		if line[at] != '-' || (at+1 < len(line) && line[at+1] != ' ') {
			break
		}
		from := at + 1
		for from < len(line) && line[from] == ' ' {
			from++
		}
		var item *yaml.Node
		var ok bool
		if from < len(line) && line[from] != '#' && p.startsMapping(line, from) {
			p.col = from
			item, ok = p.mapping(from, at)
		} else {
			item, ok = p.value(from, at, false)
		}
		if !ok {
			return nil, false
		}
		p.a.push(item)
	}
	s.Content = p.a.content(base)
	p.skip()
	if p.pos < len(p.lines) && !isDocStart(p.lines[p.pos]) && p.start() > parent && p.start() != at {
		return nil, false
	}
	return s, true
}

// startsMapping reports whether a sequence item written from column from
// of line is a mapping: a key followed by ":".
func (p *fastParser) startsMapping(line []byte, from int) bool {
	switch line[from] {
	case '"', '\'':
		_, e, ok := quoted(line, from)
		return ok && e < len(line) && line[e] == ':'
	case '[', '{', '|', '>':
		return false
	}
	for i := from; i < len(line); i++ {
		if line[i] == '#' && line[i-1] == ' ' {
			return false
		}
		if line[i] == ':' && (i+1 == len(line) || line[i+1] == ' ') {
			return true
		}
	}
	return false
}

// literal parses a literal block scalar ("|", "|-" or "|+") whose
// indicator is at column from of the current line, in an entry or item at
// column at.
func (p *fastParser) literal(from, at int) (*yaml.Node, bool) {
	line := p.lines[p.pos]
	n := p.node(yaml.ScalarNode, p.pos+1, from+1)
	n.Tag, n.Style = "!!str", yaml.LiteralStyle
	chomp := byte(0)
	i := from + 1
	if i < len(line) && (line[i] == '-' || line[i] == '+') {
		chomp = line[i]
		i++
	}
	if !onlyComment(line, i) {
		return nil, false // an indentation indicator, or text after the indicator
	}
	p.pos++
	p.col = 0
	// The block's indentation is its first line's, which must be deeper
	// than the entry and come before any blank line.
	if p.pos >= len(p.lines) {
		return nil, false
	}
	ind := indent(p.lines[p.pos])
	if ind <= at || ind == len(p.lines[p.pos]) {
		return nil, false
	}
	var b strings.Builder
	blank := 0
	for p.pos < len(p.lines) {
		l := p.lines[p.pos]
		li := indent(l)
		if li == len(l) {
			if li > ind {
				return nil, false // spaces past the indentation on a blank line
			}
			blank++
			p.pos++
			continue
		}
		if li < ind {
			break
		}
		for ; blank > 0; blank-- {
			b.WriteByte('\n')
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.Write(l[ind:])
		p.pos++
	}
	if p.pos < len(p.lines) && indent(p.lines[p.pos]) > at && !isDocStart(p.lines[p.pos]) {
		return nil, false
	}
	if p.pos == len(p.lines) && p.unterminated {
		return nil, false // the last line break decides the chomping
	}
	v := b.String()
	switch chomp {
	case 0:
		v += "\n"
	case '+':
		v += "\n" + strings.Repeat("\n", blank)
	}
	n.Value = v
	p.skip()
	return n, true
}
