package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// requestObject is a request body decoded one level deep: each field is still
// raw JSON, so every field can be type-checked on its own and all the invalid
// ones reported together.
type requestObject struct {
	fields map[string]json.RawMessage
	errs   fieldErrors
}

// decodeObject parses a request body that must be exactly one JSON object.
func decodeObject(body []byte) (*requestObject, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, Errorf(ErrInvalidJSON, "request body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, Errorf(ErrInvalidJSON, "request body must be a JSON object, not %s", typeErr.Value)
		}
		return nil, Errorf(ErrInvalidJSON, "request body is not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if fields == nil {
		return nil, Errorf(ErrInvalidJSON, "request body must be a JSON object, not null")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, Errorf(ErrInvalidJSON, "request body has data after the JSON object")
	}
	return &requestObject{fields: fields}, nil
}

// raw returns a field's JSON, treating null as absent.
func (o *requestObject) raw(name string) (json.RawMessage, bool) {
	v, ok := o.fields[name]
	if !ok || string(v) == "null" {
		return nil, false
	}
	return v, true
}

func (o *requestObject) requireString(name string) (string, bool) {
	v, ok := o.optionalString(name)
	if !ok && !o.has(name) {
		o.errs.add(name, "is required")
	}
	return v, ok
}

func (o *requestObject) has(name string) bool {
	_, ok := o.raw(name)
	return ok
}

// optionalString returns ok=false when the field is absent or not a string;
// the latter is recorded as a field error.
func (o *requestObject) optionalString(name string) (string, bool) {
	raw, ok := o.raw(name)
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		o.errs.add(name, "must be a string")
		return "", false
	}
	return s, true
}

func (o *requestObject) requireNumber(name string) (json.Number, bool) {
	if !o.has(name) {
		o.errs.add(name, "is required")
		return "", false
	}
	return o.optionalNumber(name)
}

// optionalNumber returns ok=false when the field is absent or not a number;
// the latter is recorded as a field error.
func (o *requestObject) optionalNumber(name string) (json.Number, bool) {
	raw, ok := o.raw(name)
	if !ok {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		o.errs.add(name, "must be a number")
		return "", false
	}
	n, isNumber := v.(json.Number)
	if !isNumber {
		o.errs.add(name, "must be a number")
		return "", false
	}
	return n, true
}

func (o *requestObject) requireStringList(name string) ([]string, bool) {
	raw, ok := o.raw(name)
	if !ok {
		o.errs.add(name, "is required")
		return nil, false
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		o.errs.add(name, "must be an array of strings")
		return nil, false
	}
	return list, true
}

// checkText records an error unless s holds 1 to maxRunes characters that are
// not all white space.
func (o *requestObject) checkText(name, s string, maxRunes int) {
	switch n := utf8.RuneCountInString(s); {
	case strings.TrimSpace(s) == "":
		o.errs.add(name, "must not be blank")
	case n > maxRunes:
		o.errs.add(name, "must be at most %d characters (got %d)", maxRunes, n)
	}
}

func (o *requestObject) checkOneOf(name, value string, allowed []string) bool {
	for _, a := range allowed {
		if value == a {
			return true
		}
	}
	o.errs.add(name, "must be one of %s (got %q)", strings.Join(allowed, ", "), value)
	return false
}

var integerLiteral = regexp.MustCompile(`^-?[0-9]+$`)

// checkInteger accepts only integer literals: 10.0 is refused rather than
// silently truncated, because a client sending it has a bug worth seeing.
func (o *requestObject) checkInteger(name string, n json.Number, min, max int) int {
	if !integerLiteral.MatchString(string(n)) {
		o.errs.add(name, "must be an integer (got %s)", n)
		return 0
	}
	v, err := strconv.Atoi(string(n))
	if err != nil || v < min || v > max {
		o.errs.add(name, "must be between %d and %d (got %s)", min, max, n)
		return 0
	}
	return v
}

var decimalLiteral = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE]([+-]?[0-9]+))?$`)

// checkDecimal checks a JSON number exactly, without a trip through float64,
// so that 19.99 is judged (and later returned) as 19.99.
func (o *requestObject) checkDecimal(name string, n json.Number, max int64, places int) (Decimal, bool) {
	m := decimalLiteral.FindStringSubmatch(string(n))
	if m == nil {
		o.errs.add(name, "must be a number (got %s)", n)
		return "", false
	}
	// A huge exponent would make big.Rat allocate without bound.
	if exp, err := strconv.Atoi(m[4]); m[4] != "" && (err != nil || exp < -20 || exp > 20) {
		o.errs.add(name, "must be written with an exponent between -20 and 20, or none, such as 19.99 (got %s)", n)
		return "", false
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		o.errs.add(name, "must be a number (got %s)", n)
		return "", false
	}
	// The sign, not the value: -0 equals 0 but would be echoed back as -0.
	if strings.HasPrefix(string(n), "-") || r.Cmp(new(big.Rat).SetInt64(max)) > 0 {
		o.errs.add(name, "must be between 0 and %d (got %s)", max, n)
		return "", false
	}
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)))
	if !scaled.IsInt() {
		o.errs.add(name, "must have at most %d decimal places (got %s)", places, n)
		return "", false
	}
	return Decimal(n), true
}
