package sandbox

import (
	"strings"
	"testing"
)

func TestRepeatedFieldsAreInvalidJSON(t *testing.T) {
	_, err := ParseCampaignInput([]byte(`{"name":"a","n\u0061me":"svc_test_0123456789abcdef"}`))
	want := `request body repeats the field "name" in one object; send each field once`
	if got := AsError(err); got.Code != ErrInvalidJSON || got.Message != want {
		t.Errorf("got %+v, want INVALID_JSON %q", got, want)
	}
}

func TestLongNumberLiteralIsValidationError(t *testing.T) {
	reward := "1." + strings.Repeat("0", 10_000)
	_, err := ParseCampaignInput([]byte(`{"name":"a","platform":"ios","testersRequired":1,"rewardPerBug":` + reward + `}`))
	got := AsError(err)
	if got.Code != ErrValidation || len(got.Details) != 1 || got.Details[0].Field != "rewardPerBug" {
		t.Fatalf("got %+v, want VALIDATION_ERROR on rewardPerBug", got)
	}
	if len(got.Details[0].Message) > 200 {
		t.Errorf("message of %d bytes repeats the literal: %.80s", len(got.Details[0].Message), got.Details[0].Message)
	}
}

func TestEchoedValuesAreCutAndKeysRedacted(t *testing.T) {
	_, err := ParseCampaignInput([]byte(`{"name":"a","platform":"` + strings.Repeat(`\u0001`, 100_000) + `","testersRequired":1,"rewardPerBug":1}`))
	if msg := AsError(err).Details[0].Message; len(msg) > 600 || !strings.Contains(msg, CutMark) {
		t.Errorf("platform message of %d bytes, want it short and marked as cut: %.80s", len(msg), msg)
	}
	_, err = ParseCampaignInput([]byte(`{"name":"a","platform":"svc_test_0123456789abcdef","testersRequired":1,"rewardPerBug":1}`))
	if msg := AsError(err).Details[0].Message; strings.Contains(msg, "0123456789") || !strings.Contains(msg, "svc_test_…cdef") {
		t.Errorf("message %q repeats the key", msg)
	}
}

func TestRedactKeys(t *testing.T) {
	tests := map[string]string{
		"/v1/campaigns/svc_test_0123456789abcdef":       "/v1/campaigns/svc_test_…cdef",
		"a=svc_live_0123456789abcdef&b=svc_test_xy.z":   "a=svc_live_…cdef&b=svc_test_….z",
		"no key here, not even svc_other_0123456789abc": "no key here, not even svc_other_0123456789abc",
	}
	for in, want := range tests {
		if got := RedactKeys(in); got != want {
			t.Errorf("RedactKeys(%q) = %q, want %q", in, got, want)
		}
	}
}

// The digit-by-digit judgement of plain literals agrees with the exact
// rational one on the edges: the maximum, trailing zeros, one place too many.
func TestPlainDecimalFitAgreesWithRat(t *testing.T) {
	for _, literal := range []string{"0", "0.0", "19.99", "19.990", "19.999", "999", "1000", "1000.00", "1000.01", "1001", "10000", "0.001", "0.0010", "12345678901234567890.5"} {
		lit, _ := ParseNumberLiteral(literal)
		bigPlain, precisePlain := plainDecimalFit(lit.Whole, lit.Fraction, 1000, 2)
		bigRat, preciseRat := ratDecimalFit(literal, 1000, 2)
		if bigPlain != bigRat || precisePlain != preciseRat {
			t.Errorf("%s: plain says too big %v, too precise %v; rat says %v, %v", literal, bigPlain, precisePlain, bigRat, preciseRat)
		}
	}
}
