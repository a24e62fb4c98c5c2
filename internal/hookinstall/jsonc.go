package hookinstall

import (
	"fmt"
	"unicode/utf8"
)

// node is one JSON value with its byte span in the source text.
type node struct {
	kind       byte // '{', '[', '"', or 'v' for numbers and literals
	start, end int  // [start, end) in the source
	str        string
	members    []member // objects
	elems      []*node  // arrays
}

type member struct {
	key      string
	keyStart int
	val      *node
}

// get returns the value of the object member key, or nil. A key written
// twice is an error: the file's readers take the last, and editing the
// first would be silently ignored.
func (n *node) get(key string) (*node, int, error) {
	var found *node
	idx := -1
	for i, m := range n.members {
		if m.key == key {
			if found != nil {
				return nil, -1, fmt.Errorf("key %q appears twice", key)
			}
			found, idx = m.val, i
		}
	}
	return found, idx, nil
}

// SyntaxError locates a problem in a settings file.
type SyntaxError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

type parser struct {
	src      []byte
	pos      int
	comments bool // JSONC: // and /* */ comments and trailing commas
	file     string
	err      error
}

func parseJSON(file string, src []byte, comments bool) (*node, error) {
	p := &parser{src: src, comments: comments, file: file}
	p.skip()
	if p.err != nil {
		return nil, p.err
	}
	v := p.value(0)
	if p.err != nil {
		return nil, p.err
	}
	p.skip()
	if p.err != nil {
		return nil, p.err
	}
	if p.pos < len(src) {
		return nil, p.errorf(p.pos, "unexpected %q after the end of the top-level value", p.src[p.pos])
	}
	return v, nil
}

func (p *parser) errorf(off int, format string, args ...any) error {
	line, col := 1, 1
	for i := 0; i < off && i < len(p.src); {
		r, n := utf8.DecodeRune(p.src[i:])
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += n
	}
	return &SyntaxError{File: p.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// skip passes whitespace and, in JSONC, comments.
func (p *parser) skip() {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.src) && (p.src[p.pos+1] == '/' || p.src[p.pos+1] == '*'):
			if !p.comments {
				p.fail(p.errorf(p.pos, "comments are not allowed in this file (strict JSON)"))
				return
			}
			if p.src[p.pos+1] == '/' {
				for p.pos < len(p.src) && p.src[p.pos] != '\n' {
					p.pos++
				}
			} else {
				start := p.pos
				p.pos += 2
				for {
					if p.pos+1 >= len(p.src) {
						p.fail(p.errorf(start, "unterminated /* comment"))
						return
					}
					if p.src[p.pos] == '*' && p.src[p.pos+1] == '/' {
						p.pos += 2
						break
					}
					p.pos++
				}
			}
		default:
			return
		}
	}
}

func (p *parser) fail(err error) {
	if p.err == nil {
		p.err = err
	}
	p.pos = len(p.src)
}

const maxDepth = 1000

func (p *parser) value(depth int) *node {
	if p.err != nil {
		return nil
	}
	if depth > maxDepth {
		p.fail(p.errorf(p.pos, "nesting deeper than %d", maxDepth))
		return nil
	}
	if p.pos >= len(p.src) {
		p.fail(p.errorf(p.pos, "unexpected end of file: expected a value"))
		return nil
	}
	start := p.pos
	switch c := p.src[p.pos]; {
	case c == '{':
		n := &node{kind: '{', start: start}
		p.pos++
		p.skip()
		for p.err == nil {
			if p.pos < len(p.src) && p.src[p.pos] == '}' {
				if len(n.members) > 0 && !p.comments && p.src[p.lastNonSpace()] == ',' {
					p.fail(p.errorf(p.lastNonSpace(), "trailing comma before '}'"))
					return nil
				}
				p.pos++
				n.end = p.pos
				return n
			}
			if p.pos >= len(p.src) || p.src[p.pos] != '"' {
				p.fail(p.errorf(p.pos, "expected a quoted key or '}'"))
				return nil
			}
			ks := p.pos
			k := p.value(depth + 1)
			if p.err != nil {
				return nil
			}
			p.skip()
			if p.pos >= len(p.src) || p.src[p.pos] != ':' {
				p.fail(p.errorf(p.pos, "expected ':' after key %q", k.str))
				return nil
			}
			p.pos++
			p.skip()
			v := p.value(depth + 1)
			if p.err != nil {
				return nil
			}
			n.members = append(n.members, member{key: k.str, keyStart: ks, val: v})
			p.skip()
			if p.pos < len(p.src) && p.src[p.pos] == ',' {
				p.pos++
				p.skip()
				continue
			}
			if p.pos >= len(p.src) || p.src[p.pos] != '}' {
				p.fail(p.errorf(p.pos, "expected ',' or '}' after the value of %q", k.str))
				return nil
			}
		}
		return nil
	case c == '[':
		n := &node{kind: '[', start: start}
		p.pos++
		p.skip()
		for p.err == nil {
			if p.pos < len(p.src) && p.src[p.pos] == ']' {
				if len(n.elems) > 0 && !p.comments && p.src[p.lastNonSpace()] == ',' {
					p.fail(p.errorf(p.lastNonSpace(), "trailing comma before ']'"))
					return nil
				}
				p.pos++
				n.end = p.pos
				return n
			}
			v := p.value(depth + 1)
			if p.err != nil {
				return nil
			}
			n.elems = append(n.elems, v)
			p.skip()
			if p.pos < len(p.src) && p.src[p.pos] == ',' {
				p.pos++
				p.skip()
				continue
			}
			if p.pos >= len(p.src) || p.src[p.pos] != ']' {
				p.fail(p.errorf(p.pos, "expected ',' or ']' in array"))
				return nil
			}
		}
		return nil
	case c == '"':
		p.pos++
		for p.pos < len(p.src) {
			switch p.src[p.pos] {
			case '\\':
				p.pos += 2
				continue
			case '"':
				p.pos++
				// JSON's escapes, not Go's: strconv would take \a, \x41
				// and a raw tab, which a client reading the file refuses.
				var s string
				if e := jsonUnquote(p.src[start:p.pos], &s); e != nil {
					p.fail(p.errorf(start, "invalid string: %v", e))
					return nil
				}
				return &node{kind: '"', start: start, end: p.pos, str: s}
			case '\n':
				p.fail(p.errorf(p.pos, "newline inside a string"))
				return nil
			}
			p.pos++
		}
		p.fail(p.errorf(start, "unterminated string"))
		return nil
	default:
		for p.pos < len(p.src) && isLiteralByte(p.src[p.pos]) {
			p.pos++
		}
		lit := string(p.src[start:p.pos])
		if lit == "" {
			p.fail(p.errorf(start, "unexpected %q: expected a value", c))
			return nil
		}
		if lit != "true" && lit != "false" && lit != "null" {
			if !isJSONNumber(lit) {
				p.fail(p.errorf(start, "invalid value %q", lit))
				return nil
			}
		}
		return &node{kind: 'v', start: start, end: p.pos, str: lit}
	}
}

// lastNonSpace returns the offset of the last byte before pos that is not
// whitespace (comments are not skipped; a comma before a comment still
// counts as trailing only in the plain case, which is what strict JSON
// files contain).
func (p *parser) lastNonSpace() int {
	i := p.pos - 1
	for i > 0 && (p.src[i] == ' ' || p.src[i] == '\t' || p.src[i] == '\n' || p.src[i] == '\r') {
		i--
	}
	return i
}

func isLiteralByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.'
}
