package render

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// compileGlob compiles an Argo CD directory include/exclude pattern: a glob
// where `*` and `?` also match `/`, with [classes], {a,b} alternation and
// backslash escapes. A comma-separated list without braces ("a,b") means
// {a,b}. An empty pattern compiles to nil.
func compileGlob(pattern string) (*regexp.Regexp, error) {
	p := strings.TrimSpace(pattern)
	if p == "" {
		return nil, nil
	}
	if hasTopLevelComma(p) {
		p = "{" + p + "}"
	}
	expr, err := globRegexp(p)
	if err != nil {
		return nil, fmt.Errorf("glob %q: %w", pattern, err)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("glob %q: %w", pattern, err)
	}
	return re, nil
}

// hasTopLevelComma reports whether p has a comma outside braces, brackets
// and escapes.
func hasTopLevelComma(p string) bool {
	depth, inClass := 0, false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		case c == '{':
			depth++
		case c == '}' && depth > 0:
			depth--
		case c == ',' && depth == 0:
			return true
		}
	}
	return false
}

// globRegexp translates a glob into an anchored regular expression.
func globRegexp(p string) (string, error) {
	var b strings.Builder
	b.WriteString("^")
	depth := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '\\':
			if i+1 >= len(p) {
				return "", errors.New("trailing backslash")
			}
			i++
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		case '*':
			b.WriteString(".*")
			for i+1 < len(p) && p[i+1] == '*' {
				i++
			}
		case '?':
			b.WriteString(".")
		case '[':
			end, class, err := globClass(p, i)
			if err != nil {
				return "", err
			}
			b.WriteString(class)
			i = end
		case '{':
			depth++
			b.WriteString("(?:")
		case '}':
			if depth == 0 {
				b.WriteString(`\}`)
				continue
			}
			depth--
			b.WriteString(")")
		case ',':
			if depth > 0 {
				b.WriteString("|")
			} else {
				b.WriteString(",")
			}
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	if depth != 0 {
		return "", errors.New("unclosed {")
	}
	b.WriteString("$")
	return b.String(), nil
}

// globClass translates the character class starting at p[start] == '['
// and returns the index of its closing ']'.
func globClass(p string, start int) (int, string, error) {
	var b strings.Builder
	b.WriteString("[")
	i := start + 1
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		b.WriteString("^")
		i++
	}
	first := true
	for ; i < len(p); i++ {
		c := p[i]
		switch {
		case c == ']' && !first:
			b.WriteString("]")
			return i, b.String(), nil
		case c == '\\' && i+1 < len(p):
			i++
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		case c == '[' || c == ']' || c == '\\':
			b.WriteString(`\` + string(c))
		default:
			b.WriteByte(c)
		}
		first = false
	}
	return 0, "", errors.New("unclosed [")
}

// QuoteGlob returns a directory include/exclude pattern that matches name
// and nothing else.
func QuoteGlob(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`\*?[]{},`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
