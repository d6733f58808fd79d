// Package jsonbody reads the JSON body of an API request: it checks the
// body's syntax in one pass without building values, refuses a member name
// repeated in one object, and keeps the raw JSON of the top-level fields the
// caller names, for the domain's decoders to type-check one by one.
package jsonbody

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxNesting is how deeply arrays and objects may nest in a body. Request
// objects are flat; the bound keeps a body of a million brackets from
// costing a million stack frames.
const MaxNesting = 64

// Error is why a body is not one JSON object with each member name once.
type Error struct {
	// Message says what is wrong, for the client.
	Message string
	// Repeated is the member name found twice in one object, when that
	// is what is wrong, so that the caller can redact it before echoing it.
	Repeated string
}

func (e *Error) Error() string { return e.Message }

// Object is a request body decoded one level deep: each field the caller
// asked for is still raw JSON. Other fields are checked for syntax and
// dropped without being built.
type Object struct {
	body   []byte
	known  []string
	fields fields
}

// fields are the raw values of the known fields found, in the order
// found: a body has a handful of them, which a slice searched in turn
// holds at less cost than a map.
type fields []field

type field struct {
	name  string
	value json.RawMessage
}

// get returns the value of the field name, if the body has it.
func (fs fields) get(name string) (json.RawMessage, bool) {
	for _, f := range fs {
		if f.name == name {
			return f.value, true
		}
	}
	return nil, false
}

// Decode parses a request body that must be exactly one JSON object, with
// no member name repeated in any object, and keeps the fields named in
// known. A field not named there is still found, at the cost of another
// scan. Its error is an *Error.
func Decode(body []byte, known ...string) (*Object, error) {
	sc := scanner{data: body, known: known, fields: make(fields, 0, len(known))}
	sc.skipSpace()
	if sc.pos == len(body) {
		return nil, &Error{Message: "request body is empty; send a JSON object"}
	}
	if kind := Kind(body[sc.pos]); kind != "object" {
		return nil, &Error{Message: fmt.Sprintf("request body must be a JSON object, not %s", kind)}
	}
	names := namePool.Get().(*[]uint64)
	defer func() {
		*names = (*names)[:0]
		namePool.Put(names)
	}()
	sc.names = *names
	err := sc.value(0)
	*names = sc.names
	if err != nil {
		return nil, &Error{Message: fmt.Sprintf("request body is not valid JSON: %s", err)}
	}
	sc.skipSpace()
	if sc.pos != len(body) {
		return nil, &Error{Message: "request body has data after the JSON object"}
	}
	if name, ok := sc.repeatedName(); ok {
		return nil, &Error{Message: fmt.Sprintf("request body repeats the field %q in one object", name), Repeated: name}
	}
	return &Object{body: body, known: known, fields: sc.fields}, nil
}

// Raw returns a field's JSON, null included, and whether the body has it.
func (o *Object) Raw(name string) (json.RawMessage, bool) {
	if !slices.Contains(o.known, name) {
		again := scanner{data: o.body, known: []string{name}}
		_ = again.value(0)
		o.known = append(o.known, name)
		o.fields = append(o.fields, again.fields...)
	}
	return o.fields.get(name)
}

// Kind names the JSON value that starts with c, for messages.
func Kind(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// namePool recycles the slices of member-name hashes, so that a body of a
// hundred thousand unknown fields allocates nothing per field once the
// sandbox has warmed up.
var namePool = sync.Pool{New: func() any { return new([]uint64) }}

// nameSeed is random per process, so that no client can choose names whose
// hashes collide and make duplicate detection fall back to its slow path.
var nameSeed = maphash.MakeSeed()

// scanner checks a body's JSON syntax in one pass without building values.
// Duplicated member names are found by hashing each name with the offset of
// its object: the hashes are sorted once at the end, so the cost is
// O(n log n) in the number of names and 8 bytes each, from a pooled slice;
// only equal hashes, which random seeding makes vanishingly rare unless the
// names really are equal, lead to comparing names.
type scanner struct {
	data  []byte
	pos   int
	known []string
	// fields are the known fields' raw values.
	fields fields
	// names holds a hash of every member name, with its object's offset.
	names []uint64
	// name is the current member name, unquoted, after 8 bytes of its
	// object's offset; reused for every name.
	name []byte
	// onName, if set, is called with every member name instead of
	// hashing it; repeatedName uses it to compare names.
	onName func(object int, name []byte)
}

// syntaxError is where and why a body's JSON is not valid.
type syntaxError struct {
	offset int
	what   string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("%s at byte %d", e.what, e.offset)
}

func (sc *scanner) fail(what string) error {
	return &syntaxError{offset: sc.pos, what: what}
}

func (sc *scanner) skipSpace() {
	for sc.pos < len(sc.data) {
		switch sc.data[sc.pos] {
		case ' ', '\t', '\n', '\r':
			sc.pos++
		default:
			return
		}
	}
}

func (sc *scanner) value(depth int) error {
	sc.skipSpace()
	if sc.pos == len(sc.data) {
		return sc.fail("unexpected end of input")
	}
	switch c := sc.data[sc.pos]; {
	case c == '{':
		return sc.object(depth + 1)
	case c == '[':
		return sc.array(depth + 1)
	case c == '"':
		return sc.str(false)
	case c == '-' || '0' <= c && c <= '9':
		return sc.number()
	case c == 't':
		return sc.literal("true")
	case c == 'f':
		return sc.literal("false")
	case c == 'n':
		return sc.literal("null")
	}
	return sc.fail("unexpected character")
}

func (sc *scanner) literal(word string) error {
	if !bytes.HasPrefix(sc.data[sc.pos:], []byte(word)) {
		return sc.fail("invalid literal")
	}
	sc.pos += len(word)
	return nil
}

func (sc *scanner) object(depth int) error {
	if depth > MaxNesting {
		return sc.fail(fmt.Sprintf("nested more than %d levels deep", MaxNesting))
	}
	object := sc.pos
	sc.pos++
	sc.skipSpace()
	if sc.pos < len(sc.data) && sc.data[sc.pos] == '}' {
		sc.pos++
		return nil
	}
	for {
		sc.skipSpace()
		if sc.pos == len(sc.data) || sc.data[sc.pos] != '"' {
			return sc.fail("expected a field name")
		}
		sc.name = binary.LittleEndian.AppendUint64(sc.name[:0], uint64(object))
		if err := sc.str(true); err != nil {
			return err
		}
		sc.skipSpace()
		if sc.pos == len(sc.data) || sc.data[sc.pos] != ':' {
			return sc.fail("expected ':' after a field name")
		}
		sc.pos++
		known := sc.noteName(object, depth)
		sc.skipSpace()
		start := sc.pos
		if err := sc.value(depth); err != nil {
			return err
		}
		if known != "" {
			sc.fields = append(sc.fields, field{known, sc.data[start:sc.pos]})
		}
		if done, err := sc.next('}'); done || err != nil {
			return err
		}
	}
}

// noteName records the member name in sc.name, and returns it if it is a
// known field of the body's object.
func (sc *scanner) noteName(object, depth int) string {
	name := sc.name[8:]
	if sc.onName != nil {
		sc.onName(object, name)
		return ""
	}
	sc.names = append(sc.names, maphash.Bytes(nameSeed, sc.name))
	if depth != 1 {
		return ""
	}
	for _, k := range sc.known {
		if string(name) == k {
			return k
		}
	}
	return ""
}

// next reads what follows a member or element: a ',' before another, or
// closer, which ends the object or array (done).
func (sc *scanner) next(closer byte) (done bool, err error) {
	sc.skipSpace()
	if sc.pos == len(sc.data) {
		return false, sc.fail("unexpected end of input")
	}
	switch sc.data[sc.pos] {
	case ',':
		sc.pos++
		return false, nil
	case closer:
		sc.pos++
		return true, nil
	}
	return false, sc.fail(fmt.Sprintf("expected ',' or '%c'", closer))
}

func (sc *scanner) array(depth int) error {
	if depth > MaxNesting {
		return sc.fail(fmt.Sprintf("nested more than %d levels deep", MaxNesting))
	}
	sc.pos++
	sc.skipSpace()
	if sc.pos < len(sc.data) && sc.data[sc.pos] == ']' {
		sc.pos++
		return nil
	}
	for {
		if err := sc.value(depth); err != nil {
			return err
		}
		if done, err := sc.next(']'); done || err != nil {
			return err
		}
	}
}

// str checks the string at sc.pos; if isName, it appends the string's
// value to sc.name as encoding/json would decode it: escapes resolved and
// invalid UTF-8 replaced, so that names which decode alike are equal.
func (sc *scanner) str(isName bool) error {
	sc.pos++
	for sc.pos < len(sc.data) {
		c := sc.data[sc.pos]
		switch {
		case c == '"':
			sc.pos++
			return nil
		case c < 0x20:
			return sc.fail("control character in a string")
		case c == '\\':
			r, err := sc.escape()
			if err != nil {
				return err
			}
			if isName {
				sc.name = utf8.AppendRune(sc.name, r)
			}
		case c < utf8.RuneSelf:
			if isName {
				sc.name = append(sc.name, c)
			}
			sc.pos++
		default:
			r, size := utf8.DecodeRune(sc.data[sc.pos:])
			if isName {
				sc.name = utf8.AppendRune(sc.name, r)
			}
			sc.pos += size
		}
	}
	return sc.fail("unterminated string")
}

// escape reads the escape sequence at sc.pos and returns the rune it
// stands for.
func (sc *scanner) escape() (rune, error) {
	if sc.pos+1 >= len(sc.data) {
		return 0, sc.fail("unterminated string")
	}
	c := sc.data[sc.pos+1]
	sc.pos += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r, ok := sc.hex4()
		if !ok {
			return 0, sc.fail("invalid \\u escape")
		}
		if !utf16.IsSurrogate(r) {
			return r, nil
		}
		// A surrogate pair, if the next escape completes it.
		if sc.pos+1 < len(sc.data) && sc.data[sc.pos] == '\\' && sc.data[sc.pos+1] == 'u' {
			save := sc.pos
			sc.pos += 2
			if low, ok := sc.hex4(); ok {
				if pair := utf16.DecodeRune(r, low); pair != utf8.RuneError {
					return pair, nil
				}
			}
			sc.pos = save
		}
		return utf8.RuneError, nil
	}
	sc.pos -= 2
	return 0, sc.fail("invalid escape")
}

// hex4 reads four hex digits at sc.pos.
func (sc *scanner) hex4() (rune, bool) {
	if sc.pos+4 > len(sc.data) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(sc.data[sc.pos:sc.pos+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	sc.pos += 4
	return rune(n), true
}

func (sc *scanner) number() error {
	start := sc.pos
	if sc.data[sc.pos] == '-' {
		sc.pos++
	}
	switch {
	case sc.pos < len(sc.data) && sc.data[sc.pos] == '0':
		sc.pos++
	case !sc.digits():
		return sc.fail("invalid number")
	}
	if sc.pos < len(sc.data) && sc.data[sc.pos] == '.' {
		sc.pos++
		if !sc.digits() {
			return sc.fail("invalid number")
		}
	}
	if sc.pos < len(sc.data) && (sc.data[sc.pos] == 'e' || sc.data[sc.pos] == 'E') {
		sc.pos++
		if sc.pos < len(sc.data) && (sc.data[sc.pos] == '+' || sc.data[sc.pos] == '-') {
			sc.pos++
		}
		if !sc.digits() {
			return sc.fail("invalid number")
		}
	}
	if sc.pos == start {
		return sc.fail("invalid number")
	}
	return nil
}

// digits skips one or more decimal digits, and reports whether there was one.
func (sc *scanner) digits() bool {
	start := sc.pos
	for sc.pos < len(sc.data) && '0' <= sc.data[sc.pos] && sc.data[sc.pos] <= '9' {
		sc.pos++
	}
	return sc.pos > start
}

// repeatedName reports a member name that appears twice in one object. It
// runs after a successful scan: equal hashes are the only candidates, and
// only then are the names themselves compared, in a second scan.
func (sc *scanner) repeatedName() (string, bool) {
	slices.Sort(sc.names)
	var suspects []uint64
	for i := 1; i < len(sc.names); i++ {
		if sc.names[i] == sc.names[i-1] {
			suspects = append(suspects, sc.names[i])
		}
	}
	if len(suspects) == 0 {
		return "", false
	}
	seen := map[string]bool{}
	repeated, found := "", false
	again := scanner{data: sc.data, onName: func(object int, name []byte) {
		keyed := binary.LittleEndian.AppendUint64(nil, uint64(object))
		keyed = append(keyed, name...)
		if found || !slices.Contains(suspects, maphash.Bytes(nameSeed, keyed)) {
			return
		}
		if seen[string(keyed)] {
			repeated, found = string(name), true
		}
		seen[string(keyed)] = true
	}}
	_ = again.value(0)
	return repeated, found
}

// PlainString returns the text of a JSON string that needs no decoding: no
// escape, no control character, valid UTF-8, which json.Unmarshal would
// return unchanged. Most strings a client sends are such, and the full
// decoder costs more than the rest of a create.
func PlainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(inner) {
		return "", false
	}
	return string(inner), true
}
