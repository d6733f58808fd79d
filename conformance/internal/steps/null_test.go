package steps

import (
	"strings"
	"testing"

	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

// TestQuotedNullSaysHowToMatchJSONNull: a quoted "null" is text, so it
// fails on JSON null, saying which step matches null; that step passes on
// null and fails on the text.
func TestQuotedNullSaysHowToMatchJSONNull(t *testing.T) {
	answer := func(resolution string) *scenarioState {
		s := newScenarioState(&transport.Target{Redact: wire.Redactor("")}, nil)
		s.saved["bugId"] = "bug_1"
		body := `{"data": {"items": [{"id": "bug_1", "resolution": ` + resolution + `}]}, "resolution": ` + resolution + `}`
		return sent(s, &wire.Exchange{Status: 200, Body: []byte(body)})
	}
	tests := []struct {
		name    string
		check   func(s *scenarioState) error
		answer  string
		wantErr string // "" for a pass
	}{
		{"the JSON at, quoted, on null", func(s *scenarioState) error { return s.jsonIsString(t.Context(), "resolution", "null") }, `null`,
			"the JSON at \"resolution\" is null, not the text \"null\": to match JSON null, write `the JSON at \"resolution\" should equal null`"},
		{"the JSON at, quoted, on the text", func(s *scenarioState) error { return s.jsonIsString(t.Context(), "resolution", "null") }, `"null"`, ""},
		{"a record, quoted, on null", func(s *scenarioState) error { return s.recordHas(t.Context(), "{bugId}", "resolution", "null") }, `null`,
			"the record bug_1 has \"resolution\" null, not the text \"null\": to match JSON null, write `the record with id \"{bugId}\" in the answer should have \"resolution\" equal to null`"},
		{"a record, quoted, on a number", func(s *scenarioState) error { return s.recordHas(t.Context(), "{bugId}", "resolution", "1") }, `1`,
			`the record bug_1 has "resolution" integer 1; want "1"`},
		{"a record, quoted, on a missing field", func(s *scenarioState) error { return s.recordHas(t.Context(), "{bugId}", "severity", "null") }, `null`,
			`the record bug_1 has no "severity"; want "null"`},
		{"a record, bare null, on null", func(s *scenarioState) error { return s.recordHasLiteral(t.Context(), "{bugId}", "resolution", "null") }, `null`, ""},
		{"a record, bare null, on the text", func(s *scenarioState) error { return s.recordHasLiteral(t.Context(), "{bugId}", "resolution", "null") }, `"null"`,
			`the record bug_1 has "resolution" string "null"; want null`},
		{"a record, bare number", func(s *scenarioState) error { return s.recordHasLiteral(t.Context(), "{bugId}", "resolution", "2.0") }, `2`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.check(answer(tt.answer))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("failed: %v; want a pass", err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Errorf("err %v\nwant %s", err, tt.wantErr)
			}
		})
	}
}

// TestTheLibraryKnowsWhatAStepTakes: check tells a step written without
// its doc string, or with one it does not read, from what the library says
// each step takes.
func TestTheLibraryKnowsWhatAStepTakes(t *testing.T) {
	lib := NewLibrary()
	for text, want := range map[string]string{
		"I plan the fault:": TakesDocString,
		`I send a POST request to "/v1/campaigns" with JSON:`: TakesDocString,
		`the JSON at "data" should match:`:                    TakesDocString,
		`I send a GET request to "/v1/campaigns"`:             "",
		"the response status should be 200":                   "",
	} {
		matched := lib.Matching(text)
		if len(matched) != 1 || matched[0].Takes != want {
			t.Errorf("%q takes %v, want %q", text, matched, want)
		}
	}
	for _, d := range Steps() {
		if hasDoc := strings.Contains(d.Example, "\n"); hasDoc != (d.Takes == TakesDocString) {
			t.Errorf("the example of %s shows a doc string: %t; the step takes %q", d.Pattern, hasDoc, d.Takes)
		}
	}
}
