package search

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// rgFields is what the search uses of one rg --json message. Decoding it by hand
// rather than with encoding/json keeps the parse of rg's stream a small fraction of
// rg's own time, which matters when a search reports many thousands of lines.
type rgFields struct {
	path, lines  []byte
	lineNumber   int
	firstStart   int  // start of the first submatch; -1 if none
	binaryOffset bool // binary_offset is set (a NUL byte stopped the search)
}

var errRgJSON = errors.New("malformed rg --json message")

// parseRgMessage decodes the "data" object of msg, an rg --json message.
func parseRgMessage(msg []byte) (rgFields, error) {
	f := rgFields{firstStart: -1}
	d := jsonDec{b: msg}
	err := d.object(func(key []byte) error {
		if string(key) != "data" {
			return d.skip()
		}
		return d.object(func(key []byte) error {
			var err error
			switch string(key) {
			case "path":
				f.path, err = d.rgText()
			case "lines":
				f.lines, err = d.rgText()
			case "line_number":
				f.lineNumber, err = d.int()
			case "binary_offset":
				if d.peek() == 'n' {
					return d.skip()
				}
				f.binaryOffset = true
				return d.skip()
			case "submatches":
				first := true
				return d.array(func() error {
					if !first {
						return d.skip()
					}
					first = false
					return d.object(func(key []byte) error {
						if string(key) != "start" {
							return d.skip()
						}
						f.firstStart, err = d.int()
						return err
					})
				})
			default:
				return d.skip()
			}
			return err
		})
	})
	return f, err
}

// jsonDec is a minimal JSON reader over one message.
type jsonDec struct {
	b []byte
	i int
}

func (d *jsonDec) ws() {
	for d.i < len(d.b) && (d.b[d.i] == ' ' || d.b[d.i] == '\t' || d.b[d.i] == '\n' || d.b[d.i] == '\r') {
		d.i++
	}
}

func (d *jsonDec) peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *jsonDec) expect(c byte) error {
	if d.peek() != c {
		return errRgJSON
	}
	d.i++
	return nil
}

// object calls field for each key, with the reader at its value, which field must
// consume.
func (d *jsonDec) object(field func(key []byte) error) error {
	if err := d.expect('{'); err != nil {
		return err
	}
	if d.peek() == '}' {
		d.i++
		return nil
	}
	for {
		key, err := d.str()
		if err != nil {
			return err
		}
		if err := d.expect(':'); err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return errRgJSON
		}
	}
}

// array calls elem for each element, with the reader at it.
func (d *jsonDec) array(elem func() error) error {
	if err := d.expect('['); err != nil {
		return err
	}
	if d.peek() == ']' {
		d.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return nil
		default:
			return errRgJSON
		}
	}
}

// rgText reads rg's {"text": "..."} or {"bytes": "<base64>"}.
func (d *jsonDec) rgText() ([]byte, error) {
	var out []byte
	err := d.object(func(key []byte) error {
		s, err := d.str()
		if err != nil {
			return err
		}
		switch string(key) {
		case "text":
			out = s
		case "bytes":
			out, err = base64.StdEncoding.AppendDecode(nil, s)
		}
		return err
	})
	return out, err
}

func (d *jsonDec) int() (int, error) {
	d.ws()
	start := d.i
	for d.i < len(d.b) && (d.b[d.i] >= '0' && d.b[d.i] <= '9' || d.b[d.i] == '-') {
		d.i++
	}
	return strconv.Atoi(string(d.b[start:d.i]))
}

// str reads a string. Without escapes the result aliases the message.
func (d *jsonDec) str() ([]byte, error) {
	if err := d.expect('"'); err != nil {
		return nil, err
	}
	start := d.i
	end := bytes.IndexByte(d.b[start:], '"')
	if end < 0 {
		return nil, errRgJSON
	}
	if bytes.IndexByte(d.b[start:start+end], '\\') < 0 {
		d.i = start + end + 1
		return d.b[start : start+end], nil
	}
	var out []byte
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return out, nil
		case c != '\\':
			out = append(out, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.b) {
			return nil, errRgJSON
		}
		e := d.b[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return nil, errRgJSON
			}
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if d.i+1 < len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
					save := d.i
					d.i += 2
					if lo, ok := d.hex4(); ok {
						if dec := utf16.DecodeRune(r, lo); dec != utf8.RuneError {
							r2 = dec
						} else {
							d.i = save
						}
					} else {
						d.i = save
					}
				}
				r = r2
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, errRgJSON
		}
	}
	return nil, errRgJSON
}

func (d *jsonDec) hex4() (rune, bool) {
	if d.i+4 > len(d.b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(d.b[d.i:d.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	d.i += 4
	return rune(v), true
}

// skip consumes one value of any kind.
func (d *jsonDec) skip() error {
	switch d.peek() {
	case '"':
		_, err := d.str()
		return err
	case '{':
		return d.object(func([]byte) error { return d.skip() })
	case '[':
		return d.array(d.skip)
	case 0:
		return errRgJSON
	}
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return nil
		}
		d.i++
	}
	return nil
}
