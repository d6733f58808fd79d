package sandbox

import (
	"regexp"
	"testing"
)

// numberGrammar is JSON's number grammar as a regular expression: the
// reference the hand-written parser is held to, parts and all.
var numberGrammar = regexp.MustCompile(`^(-?)(0|[1-9][0-9]*)(\.[0-9]+)?(?:[eE]([+-]?[0-9]+))?$`)

var integerGrammar = regexp.MustCompile(`^-?[0-9]+$`)

func checkNumberLiteral(t *testing.T, s string) {
	t.Helper()
	lit, ok := ParseNumberLiteral(s)
	m := numberGrammar.FindStringSubmatch(s)
	want := NumberLiteral{}
	if m != nil {
		want = NumberLiteral{Negative: m[1] == "-", Whole: m[2], Fraction: m[3], Exponent: m[4]}
	}
	if ok != (m != nil) || lit != want {
		t.Errorf("ParseNumberLiteral(%q) = %+v, %v; the grammar reads %+v, %v", s, lit, ok, want, m != nil)
	}
	if got, want := isIntegerLiteral(s), integerGrammar.MatchString(s); got != want {
		t.Errorf("isIntegerLiteral(%q) = %v, want %v", s, got, want)
	}
}

var numberSamples = []string{"", "0", "-0", "00", "-", "--1", "+1", "1", "19.99", "0.07", "7.50", "100000", "01", "-01",
	"1.", ".5", "1.e5", "1e", "1e+", "1E-", "1e5", "1E+21", "9.99e-21", "-1.5E-3", "0e0", "-0.0E-00", "1 ", " 1",
	"0x1", "1_000", "١", "1e5.5", "1.5.5", "Infinity", "NaN", "123456789012345678901234567890"}

func TestParseNumberLiteralReadsJSONsGrammar(t *testing.T) {
	for _, s := range numberSamples {
		checkNumberLiteral(t, s)
	}
}

func FuzzParseNumberLiteral(f *testing.F) {
	for _, s := range numberSamples {
		f.Add(s)
	}
	f.Fuzz(checkNumberLiteral)
}
