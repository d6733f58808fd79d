package jsonbody

import (
	"encoding/json"
	"errors"
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

var campaignFields = []string{"name", "platform", "testersRequired", "rewardPerBug"}

func TestUnknownFieldsCostNoAllocationPerField(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops pooled slices at random; run without -race")
	}
	allocs := func(body []byte) float64 {
		return testing.AllocsPerRun(20, func() {
			if _, err := Decode(body, campaignFields...); err != nil {
				t.Fatal(err)
			}
		})
	}
	few, many := allocs(campaignWithExtra(10)), allocs(campaignWithExtra(20_000))
	if many > few {
		t.Errorf("20,000 unknown fields cost %.0f allocations, 10 cost %.0f: want no more", many, few)
	}
}

func TestDuplicatedFieldsAreRefused(t *testing.T) {
	for _, body := range []string{
		`{"name":"a","name":"b"}`,
		`{"name":"a","n\u0061me":"b"}`,
		`{"x":[{"k":1,"k":1}]}`,
		string(campaignWithExtra(1000)[:len(campaignWithExtra(1000))-1]) + `,"f999":1}`,
	} {
		_, err := Decode([]byte(body), campaignFields...)
		if bad := (*Error)(nil); !errors.As(err, &bad) || bad.Repeated == "" || !strings.Contains(bad.Message, "repeats the field") {
			t.Errorf("%.60s: %v, want an *Error naming the repeated field", body, err)
		}
	}
	// The same name in two different objects is no repetition.
	if _, err := Decode([]byte(`{"name":"a","platform":"ios","testersRequired":1,"rewardPerBug":1,"x":{"k":1},"y":{"k":1}}`), campaignFields...); err != nil {
		t.Errorf("same name in sibling objects: %v", err)
	}
}

func TestAFieldNotDeclaredIsStillFound(t *testing.T) {
	obj, err := Decode([]byte(`{"a":1,"b":"x"}`), "a")
	if err != nil {
		t.Fatal(err)
	}
	if raw, ok := obj.Raw("b"); !ok || string(raw) != `"x"` {
		t.Errorf("b = %s, %v", raw, ok)
	}
}

// A string taken without the full decoder is exactly what the decoder
// returns, and anything the decoder would change goes to the decoder.
func TestPlainStringAgreesWithUnmarshal(t *testing.T) {
	for _, raw := range []string{`""`, `"Checkout flow"`, `"R&D <beta>"`, `"café ☕"`, `"a\"b"`, `"tab\there"`, `"\u00e9"`, "\"bad \xff utf8\"", "\"raw\x01control\""} {
		var want string
		wantErr := json.Unmarshal([]byte(raw), &want)
		got, ok := PlainString([]byte(raw))
		if ok && (wantErr != nil || got != want) {
			t.Errorf("PlainString(%q) = %q, json.Unmarshal gives %q, %v", raw, got, want, wantErr)
		}
		if !ok && !strings.Contains(raw, `\`) && wantErr == nil && want == raw[1:len(raw)-1] {
			t.Errorf("PlainString(%q) declined a string the decoder returns unchanged", raw)
		}
	}
}
