package jsontape

import "fmt"

type parser struct {
	src  []byte
	pos  int
	toks []token
}

func (p *parser) errf(format string, args ...any) error {
	return &SyntaxError{p.pos, fmt.Sprintf(format, args...)}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// value parses one value at p.pos (whitespace already skipped).
func (p *parser) value(depth int) error {
	if p.pos >= len(p.src) {
		return p.errf("unexpected end of input")
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true", True)
	case c == 'f':
		return p.literal("false", False)
	case c == 'n':
		return p.literal("null", Null)
	default:
		return p.errf("unexpected %q where a value should be", c)
	}
}

func (p *parser) push(kind Kind, start int) int {
	p.toks = append(p.toks, token{kind: kind, start: int32(start)})
	return len(p.toks) - 1
}

func (p *parser) finish(i int) {
	p.toks[i].end = int32(p.pos)
	p.toks[i].next = int32(len(p.toks))
}

func (p *parser) literal(word string, kind Kind) error {
	if len(p.src)-p.pos < len(word) || string(p.src[p.pos:p.pos+len(word)]) != word {
		return p.errf("invalid literal, want %s", word)
	}
	i := p.push(kind, p.pos)
	p.pos += len(word)
	p.finish(i)
	return nil
}

func (p *parser) object(depth int) error {
	if depth > MaxDepth {
		return p.errf("nesting deeper than %d levels", MaxDepth)
	}
	i := p.push(Object, p.pos)
	p.pos++ // {
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
		p.finish(i)
		return nil
	}
	for {
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return p.errf("object key must be a string")
		}
		if err := p.str(); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return p.errf("missing ':' after object key")
		}
		p.pos++
		p.skipSpace()
		if err := p.value(depth); err != nil {
			return err
		}
		p.toks[i].count++
		p.skipSpace()
		if p.pos >= len(p.src) {
			return p.errf("unexpected end of input in object")
		}
		switch p.src[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
		case '}':
			p.pos++
			p.finish(i)
			return nil
		default:
			return p.errf("unexpected %q in object, want ',' or '}'", p.src[p.pos])
		}
	}
}

func (p *parser) array(depth int) error {
	if depth > MaxDepth {
		return p.errf("nesting deeper than %d levels", MaxDepth)
	}
	i := p.push(Array, p.pos)
	p.pos++ // [
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
		p.finish(i)
		return nil
	}
	for {
		if err := p.value(depth); err != nil {
			return err
		}
		p.toks[i].count++
		p.skipSpace()
		if p.pos >= len(p.src) {
			return p.errf("unexpected end of input in array")
		}
		switch p.src[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
		case ']':
			p.pos++
			p.finish(i)
			return nil
		default:
			return p.errf("unexpected %q in array, want ',' or ']'", p.src[p.pos])
		}
	}
}

func (p *parser) str() error {
	i := p.push(String, p.pos)
	p.pos++ // opening quote
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			p.finish(i)
			return nil
		case c == '\\':
			p.toks[i].escaped = true
			if err := p.escape(); err != nil {
				return err
			}
		case c < 0x20:
			return p.errf("control character %#x in string", c)
		default:
			p.pos++
		}
	}
	return p.errf("unterminated string")
}

func (p *parser) escape() error {
	p.pos++ // backslash
	if p.pos >= len(p.src) {
		return p.errf("unterminated escape")
	}
	switch p.src[p.pos] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		p.pos++
		return nil
	case 'u':
		if len(p.src)-p.pos < 5 {
			return p.errf("short \\u escape")
		}
		for _, h := range p.src[p.pos+1 : p.pos+5] {
			if !isHex(h) {
				return p.errf("invalid \\u escape")
			}
		}
		p.pos += 5
		return nil
	}
	return p.errf("invalid escape \\%c", p.src[p.pos])
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (p *parser) number() error {
	i := p.push(Number, p.pos)
	if p.src[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(p.src) && p.src[p.pos] == '0':
		p.pos++
	case p.pos < len(p.src) && p.src[p.pos] >= '1' && p.src[p.pos] <= '9':
		p.digits()
	default:
		return p.errf("invalid number")
	}
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		if p.digits() == 0 {
			return p.errf("invalid number: no digits after '.'")
		}
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			return p.errf("invalid number: no digits in exponent")
		}
	}
	p.finish(i)
	return nil
}

func (p *parser) digits() int {
	n := 0
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
		n++
	}
	return n
}
