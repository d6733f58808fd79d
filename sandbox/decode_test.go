package sandbox

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// campaignWithExtra is a valid campaign body with n unknown fields.
func campaignWithExtra(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"name":"a","platform":"ios","testersRequired":1,"rewardPerBug":1`)
	for i := range n {
		fmt.Fprintf(&b, `,"f%d":0`, i)
	}
	b.WriteString("}")
	return []byte(b.String())
}

func TestUnknownFieldsCostNoAllocationPerField(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops pooled slices at random; run without -race")
	}
	allocs := func(body []byte) float64 {
		return testing.AllocsPerRun(20, func() {
			if _, err := ParseCampaignInput(body); err != nil {
				t.Fatal(err)
			}
		})
	}
	few, many := allocs(campaignWithExtra(10)), allocs(campaignWithExtra(20_000))
	if many > few {
		t.Errorf("20,000 unknown fields cost %.0f allocations, 10 cost %.0f: want no more", many, few)
	}
}

func TestDuplicatedFieldsAreInvalidJSON(t *testing.T) {
	for _, body := range []string{
		`{"name":"a","name":"b"}`,
		`{"name":"a","n\u0061me":"b"}`,
		`{"x":[{"k":1,"k":1}]}`,
		string(campaignWithExtra(1000)[:len(campaignWithExtra(1000))-1]) + `,"f999":1}`,
	} {
		_, err := ParseCampaignInput([]byte(body))
		if got := AsError(err); got.Code != ErrInvalidJSON || !strings.Contains(got.Message, "repeats the field") {
			t.Errorf("%.60s: %v, want INVALID_JSON naming the repeated field", body, err)
		}
	}
	// The same name in two different objects is no repetition.
	if _, err := ParseCampaignInput([]byte(`{"name":"a","platform":"ios","testersRequired":1,"rewardPerBug":1,"x":{"k":1},"y":{"k":1}}`)); err != nil {
		t.Errorf("same name in sibling objects: %v", err)
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

func TestAFieldNotDeclaredIsStillFound(t *testing.T) {
	obj, err := decodeObject([]byte(`{"a":1,"b":"x"}`), "a")
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := obj.optionalString("b"); !ok || s != "x" {
		t.Errorf("b = %q, %v", s, ok)
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

// A string taken without the full decoder is exactly what the decoder
// returns, and anything the decoder would change goes to the decoder.
func TestPlainStringAgreesWithUnmarshal(t *testing.T) {
	for _, raw := range []string{`""`, `"Checkout flow"`, `"R&D <beta>"`, `"café ☕"`, `"a\"b"`, `"tab\there"`, `"\u00e9"`, "\"bad \xff utf8\"", "\"raw\x01control\""} {
		var want string
		wantErr := json.Unmarshal([]byte(raw), &want)
		got, ok := plainString([]byte(raw))
		if ok && (wantErr != nil || got != want) {
			t.Errorf("plainString(%q) = %q, json.Unmarshal gives %q, %v", raw, got, want, wantErr)
		}
		if !ok && !strings.Contains(raw, `\`) && wantErr == nil && want == raw[1:len(raw)-1] {
			t.Errorf("plainString(%q) declined a string the decoder returns unchanged", raw)
		}
	}
}
