package httpapi

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"

	"github.com/testcampaign/kit/sandbox"
)

// encodedByJSON is a success envelope of data as encoding/json writes it for
// writeJSON, the bytes every appender must reproduce.
func encodedByJSON(data any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(successEnvelope{Success: true, Data: data})
	return buf.Bytes(), err
}

// checkAppended fails unless the appenders write data exactly as
// encoding/json does, or decline it when encoding/json fails; it reports
// whether they wrote it.
func checkAppended(t *testing.T, data any) bool {
	t.Helper()
	want, err := encodedByJSON(data)
	got, ok := appendSuccess(nil, data)
	switch {
	case ok && err != nil:
		t.Fatalf("appended %s for %#v, which encoding/json refuses: %v", got, data, err)
	case ok && !bytes.Equal(got, want):
		t.Fatalf("appended bytes differ for %#v\n got: %q\nwant: %q", data, got, want)
	}
	return ok
}

// campaignAndBug are a campaign and a bug whose every text field is s.
func campaignAndBug(s string, reward sandbox.Decimal, created, updated sandbox.Time, resolution *string) (sandbox.Campaign, sandbox.Bug) {
	return sandbox.Campaign{
			ID: s, Name: s, Platform: s, TestersRequired: len(s) - 3, RewardPerBug: reward, Status: s, CreatedAt: created, Seq: 7,
		}, sandbox.Bug{
			ID: s, CampaignID: s, TesterID: s, Title: s, Description: s, Severity: s, Status: s,
			Resolution: resolution, CreatedAt: created, UpdatedAt: updated, Seq: 9,
		}
}

// everyShape is each kind of data the appenders write, holding c and b.
func everyShape(c sandbox.Campaign, b sandbox.Bug, cursor *string) []any {
	return []any{
		c, b,
		sandbox.Page[sandbox.Campaign]{Items: []sandbox.Campaign{c, c}, HasMore: cursor != nil, NextCursor: cursor},
		sandbox.Page[sandbox.Bug]{Items: []sandbox.Bug{b, b}, HasMore: cursor != nil, NextCursor: cursor},
	}
}

func TestAppendersMatchEncodingJSON(t *testing.T) {
	texts := []string{
		"", "cmp_000001", "Checkout flow", `R&D <beta> "quoted" back\slash /slash`,
		"\x00\x01\b\f\n\r\t\x1f\x7f", "line\u2028para\u2029end", "caf\u00e9 \U0001F41B \uFFFD",
		"bad \xff utf-8 \xc3", "cut \xe2\x80", "surrogate \xed\xa0\x80",
	}
	rewards := []sandbox.Decimal{"", "0", "-0", "19.99", "0.07", "7.50", "100000", "1e21", "1E+21", "9.99e-21", "-1.5E-3", "0e0", "-0.0E-00"}
	times := []sandbox.Time{0, 1767323045000, -1, 253402300799999, 253402300800000, math.MinInt64, math.MaxInt64}
	fixed := "fixed"
	cursor := "YzEuNA"
	for _, s := range texts {
		for _, reward := range rewards {
			for _, at := range times {
				c, b := campaignAndBug(s, reward, at, at+1, &fixed)
				for _, data := range everyShape(c, b, &cursor) {
					if !checkAppended(t, data) {
						t.Errorf("declined %#v, which holds only valid values", data)
					}
				}
			}
		}
	}
	_, bug := campaignAndBug("x", "1", 1, 2, nil)
	for _, data := range []any{
		bug,
		sandbox.Page[sandbox.Campaign]{}, sandbox.Page[sandbox.Bug]{},
		sandbox.NewPage[sandbox.Campaign](nil, false, 0), sandbox.NewPage([]sandbox.Bug{bug}, true, 42),
	} {
		if !checkAppended(t, data) {
			t.Errorf("declined %#v", data)
		}
	}
}

// A reward that is not a number literal cannot come from a request; should
// one appear, the response must stay what encoding/json makes of it.
func TestAppendersDeclineWhatEncodingJSONWouldNotWriteAsIs(t *testing.T) {
	for _, reward := range []sandbox.Decimal{"abc", "1 ", " 1", "01", "-01", "00", "1.", ".5", "1.e5", "-", "--1", `"1"`, "{}", "1e", "1e+", "1.5E-", "+1", "0x1", "1_000", "١"} {
		c, _ := campaignAndBug("x", reward, 0, 0, nil)
		for _, data := range []any{c, sandbox.Page[sandbox.Campaign]{Items: []sandbox.Campaign{c}}} {
			if checkAppended(t, data) {
				t.Errorf("appended reward %q, which encoding/json does not write as it is", reward)
			}
			var buf bytes.Buffer
			err := encodeBody(&buf, successEnvelope{Success: true, Data: data})
			want, wantErr := encodedByJSON(data)
			if (err != nil) != (wantErr != nil) || (err == nil && !bytes.Equal(buf.Bytes(), want)) {
				t.Errorf("reward %q: response %q (%v), encoding/json %q (%v)", reward, buf.Bytes(), err, want, wantErr)
			}
		}
	}
}

func FuzzAppendersMatchEncodingJSON(f *testing.F) {
	f.Add("Checkout flow", "19.99", 19.99, int64(1767323045000), int64(1767323045001), true, "YzEuNA")
	f.Add(`R&D <beta> "q" \`, "0.07", 0.07, int64(0), int64(-1), false, "")
	f.Add("line\u2028para\u2029 \xff\x00\x1f\x7f", "1e21", 1e21, int64(math.MaxInt64), int64(math.MinInt64), true, "\xc3")
	f.Add("", "", 1e20, int64(253402300800000), int64(-62135596800001), false, "\u2028")
	// Negative zero, written "-0" and "-0.00E+00"; Go's literal -0.0 is +0.
	f.Add("x", "1 ", math.Copysign(0, -1), int64(1), int64(2), true, "-0")
	// amount is also written as a reward the ways a client might send it,
	// since few random strings are numbers.
	f.Fuzz(func(t *testing.T, text, reward string, amount float64, created, updated int64, resolved bool, cursor string) {
		var resolution *string
		if resolved {
			resolution = &text
		}
		c, b := campaignAndBug(text, sandbox.Decimal(reward), sandbox.Time(created), sandbox.Time(updated), resolution)
		var next *string
		if cursor != "" {
			next = &cursor
		}
		for _, reward := range []string{reward, strconv.FormatFloat(amount, 'g', -1, 64), strconv.FormatFloat(amount, 'f', -1, 64), strconv.FormatFloat(amount, 'E', 2, 64)} {
			c.RewardPerBug = sandbox.Decimal(reward)
			for _, data := range everyShape(c, b, next) {
				if !checkAppended(t, data) {
					if _, ok := appendDecimal(nil, c.RewardPerBug); ok {
						t.Fatalf("declined %#v, whose reward is a number literal", data)
					}
				}
			}
		}
	})
}

// BenchmarkEncodeBody compares the appenders with encoding/json on what the
// reads return; impl=encoding_json runs first, so that benchstat -col /impl
// takes it as the base.
func BenchmarkEncodeBody(b *testing.B) {
	c, bug := campaignAndBug("Checkout flow <beta>", "19.99", 1767323045000, 1767323045001, nil)
	cursor := "YzEuNA"
	for _, bc := range []struct {
		name string
		data any
	}{
		{"data=campaign", c},
		{"data=campaigns_20", sandbox.Page[sandbox.Campaign]{Items: slices.Repeat([]sandbox.Campaign{c}, 20), HasMore: true, NextCursor: &cursor}},
		{"data=bugs_20", sandbox.Page[sandbox.Bug]{Items: slices.Repeat([]sandbox.Bug{bug}, 20), HasMore: true, NextCursor: &cursor}},
	} {
		envelope := successEnvelope{Success: true, Data: bc.data}
		b.Run(bc.name+"/impl=encoding_json", func(b *testing.B) {
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				enc := json.NewEncoder(&buf)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(envelope); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/impl=appender", func(b *testing.B) {
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := encodeBody(&buf, envelope); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// An error envelope made outside a handler, for a connection the HTTP
// server cannot serve, is the one a handler writes: the same status, the
// same bytes, a key in its message redacted.
func TestErrorEnvelopeIsWhatAHandlerWrites(t *testing.T) {
	for _, apiErr := range []*sandbox.Error{
		sandbox.Errorf(sandbox.ErrHTTPSRequired, "the sandbox serves HTTPS on this port: use https://127.0.0.1:8443, not http://127.0.0.1:8443"),
		sandbox.Errorf(sandbox.ErrInvalidParameter, "bad cursor svc_test_a_secret_key_1234"),
		{Code: sandbox.ErrValidation, Message: "1 invalid field", Details: []sandbox.FieldError{{Field: "name", Message: "is required"}}},
	} {
		status, body := ErrorEnvelope(apiErr)
		rec := httptest.NewRecorder()
		(&Server{}).writeError(rec, httptest.NewRequest("GET", "/v1/campaigns", nil), apiErr)
		if status != rec.Code || !bytes.Equal(body, rec.Body.Bytes()) {
			t.Errorf("%s: ErrorEnvelope gives %d %s, a handler writes %d %s", apiErr.Code, status, body, rec.Code, rec.Body.Bytes())
		}
		if bytes.Contains(body, []byte("a_secret_key")) {
			t.Errorf("%s: the key is in the envelope whole: %s", apiErr.Code, body)
		}
	}
	if status, _ := ErrorEnvelope(sandbox.Errorf(sandbox.ErrHTTPSRequired, "m")); status != http.StatusBadRequest {
		t.Errorf("HTTPS_REQUIRED goes with %d, want 400", status)
	}
}
