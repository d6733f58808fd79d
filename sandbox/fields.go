package sandbox

import (
	"encoding/json"
	"errors"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/testcampaign/kit/sandbox/jsonbody"
)

// MaxNumberLength is the longest number literal a field may hold: every
// number the API takes fits in far fewer characters, and a longer one would
// only make the checks below work harder.
const MaxNumberLength = 32

// requestObject is a request body decoded one level deep, with the invalid
// fields found so far, so that every field can be type-checked on its own
// and all the invalid ones reported together.
type requestObject struct {
	body *jsonbody.Object
	errs fieldErrors
}

// decodeObject parses a request body that must be exactly one JSON object,
// with no member name repeated in any object, and keeps the fields named in
// known. Its error is INVALID_JSON.
func decodeObject(body []byte, known ...string) (*requestObject, error) {
	obj, err := jsonbody.Decode(body, known...)
	if err != nil {
		var bad *jsonbody.Error
		if errors.As(err, &bad) && bad.Repeated != "" {
			return nil, Errorf(ErrInvalidJSON, "request body repeats the field %q in one object; send each field once", Echo(bad.Repeated))
		}
		return nil, Errorf(ErrInvalidJSON, "%s", err)
	}
	return &requestObject{body: obj}, nil
}

// raw returns a field's JSON, treating null as absent.
func (o *requestObject) raw(name string) (json.RawMessage, bool) {
	v, ok := o.body.Raw(name)
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
	if s, ok := jsonbody.PlainString(raw); ok {
		return s, true
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

// optionalNumber returns ok=false when the field is absent, not a number, or
// a number literal longer than MaxNumberLength; the latter two are recorded
// as field errors.
func (o *requestObject) optionalNumber(name string) (json.Number, bool) {
	raw, ok := o.raw(name)
	if !ok {
		return "", false
	}
	if jsonbody.Kind(raw[0]) != "number" {
		o.errs.add(name, "must be a number")
		return "", false
	}
	if len(raw) > MaxNumberLength {
		o.errs.add(name, "must be a number written in at most %d characters (got %d)", MaxNumberLength, len(raw))
		return "", false
	}
	return json.Number(raw), true
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
	o.errs.add(name, "must be one of %s (got %q)", strings.Join(allowed, ", "), Echo(value))
	return false
}

// checkInteger accepts only integer literals: 10.0 is refused rather than
// silently truncated, because a client sending it has a bug worth seeing.
func (o *requestObject) checkInteger(name string, n json.Number, min, max int) int {
	if !isIntegerLiteral(string(n)) {
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

// checkDecimal checks a JSON number exactly, without a trip through float64,
// so that 19.99 is judged (and later returned) as 19.99.
func (o *requestObject) checkDecimal(name string, n json.Number, max int64, places int) (Decimal, bool) {
	lit, ok := ParseNumberLiteral(string(n))
	if !ok {
		o.errs.add(name, "must be a number (got %s)", n)
		return "", false
	}
	// A huge exponent would make big.Rat allocate without bound.
	if lit.Exponent != "" {
		if exp, err := strconv.Atoi(lit.Exponent); err != nil || exp < -20 || exp > 20 {
			o.errs.add(name, "must be written with an exponent between -20 and 20, or none, such as 19.99 (got %s)", n)
			return "", false
		}
	}
	// The sign, not the value: -0 equals 0 but would be echoed back as -0.
	tooBig, tooPrecise := plainDecimalFit(lit.Whole, lit.Fraction, max, places)
	if lit.Negative || lit.Exponent != "" {
		tooBig, tooPrecise = ratDecimalFit(string(n), max, places)
	}
	if lit.Negative || tooBig {
		o.errs.add(name, "must be between 0 and %d (got %s)", max, n)
		return "", false
	}
	if tooPrecise {
		o.errs.add(name, "must have at most %d decimal places (got %s)", places, n)
		return "", false
	}
	return Decimal(n), true
}

// plainDecimalFit judges a literal written without sign or exponent, as
// money nearly always is, from its digits: whole has no leading zeros,
// fraction is empty or a dot and digits.
func plainDecimalFit(whole, fraction string, max int64, places int) (tooBig, tooPrecise bool) {
	fraction = strings.TrimRight(strings.TrimPrefix(fraction, "."), "0")
	limit := strconv.FormatInt(max, 10)
	tooBig = len(whole) > len(limit) || len(whole) == len(limit) && (whole > limit || whole == limit && fraction != "")
	return tooBig, len(fraction) > places
}

// ratDecimalFit judges any decimal literal, exponent included, exactly.
func ratDecimalFit(literal string, max int64, places int) (tooBig, tooPrecise bool) {
	r, ok := new(big.Rat).SetString(literal)
	if !ok {
		return true, false
	}
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)))
	return r.Cmp(new(big.Rat).SetInt64(max)) > 0, !scaled.IsInt()
}
