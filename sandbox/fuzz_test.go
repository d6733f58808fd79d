package sandbox

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// The fuzz targets below judge each decoder against an oracle written from
// docs/contract.md, not from the decoders: a body is decoded here with encoding/json
// alone, every field is checked by rules restated in the test, and the set of
// fields the oracle finds invalid must be exactly the set the decoder reports.
// Names carry a fuzz prefix because the package's other tests share the
// namespace.

// fuzzFields decodes a body the way a client reads its own request: one JSON
// object, numbers kept as literals. ok is false for anything that is not
// exactly one object, or that repeats a name within an object, or nests more
// than 64 levels deep, which the decoders must refuse as INVALID_JSON.
func fuzzFields(body []byte) (map[string]any, bool) {
	if !json.Valid(body) || !fuzzUniqueNames(body) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	fields, ok := v.(map[string]any)
	return fields, ok
}

// fuzzUniqueNames walks a valid body's tokens and reports whether no object
// repeats a member name (as decoded) and nothing nests more than 64 deep.
func fuzzUniqueNames(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	// One entry per open array or object: the names seen, nil for an array.
	var open []map[string]bool
	expectName := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return true
		}
		switch tok {
		case json.Delim('{'):
			open = append(open, map[string]bool{})
		case json.Delim('['):
			open = append(open, nil)
		case json.Delim('}'), json.Delim(']'):
			open = open[:len(open)-1]
		}
		if len(open) > 64 {
			return false
		}
		if name, ok := tok.(string); ok && expectName {
			if open[len(open)-1][name] {
				return false
			}
			open[len(open)-1][name] = true
		}
		expectName = len(open) > 0 && open[len(open)-1] != nil && dec.More() && (tok == json.Delim('{') || !expectName)
	}
}

// fuzzCheckRefusal checks what every refusal promises, and returns the
// fields the error names (nil for an error that is not VALIDATION_ERROR).
func fuzzCheckRefusal(t *testing.T, err error, codes []string, fields []string) []string {
	t.Helper()
	var apiErr *Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %q (%T) is no *Error, so the client would see INTERNAL_ERROR", err, err)
	}
	if got := AsError(err); !slices.Contains([]string{ErrValidation, ErrInvalidJSON, ErrInvalidParameter}, got.Code) {
		t.Fatalf("AsError gives %s, want a client error answered with 400", got.Code)
	}
	if !slices.Contains(codes, apiErr.Code) {
		t.Fatalf("code %s, want one of %v", apiErr.Code, codes)
	}
	if apiErr.Message == "" {
		t.Fatalf("%s without a message", apiErr.Code)
	}
	if apiErr.Code != ErrValidation {
		if len(apiErr.Details) != 0 {
			t.Fatalf("%s carries details %v; only VALIDATION_ERROR names fields", apiErr.Code, apiErr.Details)
		}
		return nil
	}
	if len(apiErr.Details) == 0 {
		t.Fatalf("VALIDATION_ERROR %q names no field", apiErr.Message)
	}
	var named []string
	for _, d := range apiErr.Details {
		if !slices.Contains(fields, d.Field) || d.Message == "" {
			t.Fatalf("detail %+v: want a message about one of the fields %v", d, fields)
		}
		if !slices.Contains(named, d.Field) {
			named = append(named, d.Field)
		}
	}
	return named
}

// fuzzCheckDecoder runs parse twice on the body: the two results must agree,
// and then either the oracle's invalid fields are none and the result is
// checked by valid, or the refusal names exactly those fields.
func fuzzCheckDecoder[T any](t *testing.T, body []byte, parse func([]byte) (T, error), fields []string, invalid func(map[string]any) []string, valid func(T, map[string]any)) {
	t.Helper()
	got, err := parse(body)
	again, againErr := parse(body)
	if diff := cmp.Diff(got, again); diff != "" {
		t.Fatalf("same body, different results (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(err, againErr, cmp.Comparer(func(a, b error) bool { return cmp.Equal(AsError(a), AsError(b)) })); diff != "" {
		t.Fatalf("same body, different errors (-first +second):\n%s", diff)
	}

	obj, isObject := fuzzFields(body)
	if !isObject {
		if err == nil {
			t.Fatalf("accepted a body that is not one JSON object: %+v", got)
		}
		fuzzCheckRefusal(t, err, []string{ErrInvalidJSON}, fields)
		return
	}
	want := invalid(obj)
	if err == nil {
		if len(want) != 0 {
			t.Fatalf("accepted %+v, but fields %v are invalid", got, want)
		}
		valid(got, obj)
		return
	}
	named := fuzzCheckRefusal(t, err, []string{ErrValidation}, fields)
	slices.Sort(want)
	slices.Sort(named)
	if diff := cmp.Diff(want, named); diff != "" {
		t.Fatalf("refusal %q names the wrong fields (-want +got):\n%s", err, diff)
	}
}

// fuzzText is the contract's rule for names and titles: 1 to max characters,
// not all white space.
func fuzzText(v any, max int) bool {
	s, ok := v.(string)
	return ok && strings.TrimSpace(s) != "" && utf8.RuneCountInString(s) <= max
}

func fuzzOneOf(v any, allowed ...string) bool {
	s, ok := v.(string)
	return ok && slices.Contains(allowed, s)
}

// fuzzInteger accepts an integer literal from min to max. A literal with a
// fraction or exponent is refused even when its value is whole, as the
// sandbox documents: a client sending 10.0 for a count has a bug.
func fuzzInteger(v any, min, max int64) bool {
	n, ok := v.(json.Number)
	if !ok || len(n) > 32 || strings.ContainsAny(string(n), ".eE") {
		return false
	}
	i, ok := new(big.Int).SetString(string(n), 10)
	return ok && i.Cmp(big.NewInt(min)) >= 0 && i.Cmp(big.NewInt(max)) <= 0
}

// fuzzMoney accepts a number from 0 to 100000 with at most two decimals. An
// exponent beyond ±20 is refused whatever the value, as the sandbox does, so
// that no literal can make the check allocate without bound.
func fuzzMoney(v any) (*big.Rat, bool) {
	n, ok := v.(json.Number)
	if !ok || len(n) > 32 {
		return nil, false
	}
	if i := strings.IndexAny(string(n), "eE"); i >= 0 {
		exp, err := strconv.Atoi(string(n)[i+1:])
		if err != nil || exp < -20 || exp > 20 {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || r.Sign() < 0 || r.Cmp(big.NewRat(100000, 1)) > 0 {
		return nil, false
	}
	return r, new(big.Rat).Mul(r, big.NewRat(100, 1)).IsInt()
}

func fuzzPresent(obj map[string]any, name string) bool {
	return obj[name] != nil
}

var fuzzCampaignBodies = []string{
	`{"name":"Checkout","platform":"ios","testersRequired":10,"rewardPerBug":19.99}`,
	`{"name":"Onboarding","platform":"android","testersRequired":1,"rewardPerBug":0}`,
	`{"name":"Web beta","platform":"web","testersRequired":10000,"rewardPerBug":100000,"extra":[1,2]}`,
	`{"name":"Exp","platform":"web","testersRequired":5,"rewardPerBug":1.5e1}`,
	`{"name":"","platform":"ios","testersRequired":10,"rewardPerBug":1}`,
	`{"name":"   ","platform":"tv","testersRequired":0,"rewardPerBug":-1}`,
	`{"name":"x","platform":"ios","testersRequired":10.0,"rewardPerBug":19.999}`,
	`{"name":null,"platform":null,"testersRequired":null,"rewardPerBug":null}`,
	`{"name":7,"platform":["ios"],"testersRequired":"10","rewardPerBug":"1"}`,
	`{"name":"a","platform":"ios","testersRequired":1e2,"rewardPerBug":1e400}`,
	`{"name":"dup","name":"","platform":"ios","testersRequired":3,"rewardPerBug":2}`,
	`{}`, `[]`, `null`, `"x"`, `{"name":"a"} {}`, `{"name":`, ``, `   `,
	`{"name":"a","platform":"ios","testersRequired":1,"rewardPerBug":1,"x":{"k":1,"k":2}}`,
	`{"name":"a","\u006eame":"b","platform":"ios","testersRequired":1,"rewardPerBug":1}`,
	`{"name":"a","platform":"ios","testersRequired":1,"rewardPerBug":1,"x":{"k":1},"y":{"k":1}}`,
	`{"name":"a","platform":"ios","testersRequired":1,"rewardPerBug":1.000000000000000000000000000000}`,
	`{"name":"a","platform":"ios","testersRequired":1,"rewardPerBug":1.0000000000000000000000000000000}`,
	`{"name":"a","platform":"ios","testersRequired":1,"rewardPerBug":1,"deep":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	`{"name":"\ud83d\ude00\ud800","platform":"ios","testersRequired":1,"rewardPerBug":1,"\ud800":1,"\ufffd":2}`,
}

func FuzzParseCampaignInput(f *testing.F) {
	for _, body := range fuzzCampaignBodies {
		f.Add([]byte(body))
	}
	f.Add([]byte(`{"name":"` + strings.Repeat("é", 200) + `","platform":"ios","testersRequired":2,"rewardPerBug":0.01}`))
	f.Add([]byte(`{"name":"` + strings.Repeat("é", 201) + `","platform":"ios","testersRequired":2,"rewardPerBug":0.01}`))
	fields := []string{"name", "platform", "testersRequired", "rewardPerBug"}
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzCheckDecoder(t, body, ParseCampaignInput, fields, func(obj map[string]any) []string {
			var bad []string
			if !fuzzText(obj["name"], 200) {
				bad = append(bad, "name")
			}
			if !fuzzOneOf(obj["platform"], "ios", "android", "web") {
				bad = append(bad, "platform")
			}
			if !fuzzInteger(obj["testersRequired"], 1, 10000) {
				bad = append(bad, "testersRequired")
			}
			if _, ok := fuzzMoney(obj["rewardPerBug"]); !ok {
				bad = append(bad, "rewardPerBug")
			}
			return bad
		}, func(in CampaignInput, obj map[string]any) {
			if n := utf8.RuneCountInString(in.Name); n < 1 || n > 200 || strings.TrimSpace(in.Name) == "" || in.Name != obj["name"] {
				t.Fatalf("name %q: want the body's name, 1 to 200 characters, not blank", in.Name)
			}
			if !slices.Contains([]string{"ios", "android", "web"}, in.Platform) {
				t.Fatalf("platform %q", in.Platform)
			}
			if in.TestersRequired < 1 || in.TestersRequired > 10000 || json.Number(strconv.Itoa(in.TestersRequired)) != obj["testersRequired"] {
				t.Fatalf("testersRequired %d, body has %v", in.TestersRequired, obj["testersRequired"])
			}
			// The reward must survive the trip back to JSON as the very
			// literal the client sent, and still mean the same amount.
			out, err := json.Marshal(in.RewardPerBug)
			if err != nil || json.Number(out) != obj["rewardPerBug"] {
				t.Fatalf("rewardPerBug marshals to %s (%v), want %v", out, err, obj["rewardPerBug"])
			}
			var back json.Number
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatalf("rewardPerBug %s does not parse back: %v", out, err)
			}
			r, ok := fuzzMoney(back)
			if !ok {
				t.Fatalf("rewardPerBug %s is outside 0 to 100000 or has more than 2 decimals", back)
			}
			if sent, _ := fuzzMoney(obj["rewardPerBug"]); r.Cmp(sent) != 0 {
				t.Fatalf("rewardPerBug %s, sent %v", r, obj["rewardPerBug"])
			}
		})
	})
}

var (
	fuzzStatuses    = []string{"new", "confirmed", "in_progress", "resolved", "closed"}
	fuzzResolutions = []string{"fixed", "wont_fix", "duplicate", "cannot_reproduce", "not_a_bug"}
)

// fuzzOptional returns the string a body field holds, or nil when it is
// absent or null.
func fuzzOptional(v any) *string {
	if s, ok := v.(string); ok {
		return &s
	}
	return nil
}

func FuzzParseBugPatch(f *testing.F) {
	for _, body := range []string{
		`{"status":"confirmed"}`, `{"status":"resolved","resolution":"fixed"}`, `{"resolution":"duplicate"}`,
		`{"status":"closed","resolution":"not_a_bug","note":"x"}`, `{"status":"done"}`, `{"resolution":"FIXED"}`,
		`{"status":null}`, `{"status":1,"resolution":true}`, `{}`, `{"status":"new","status":"bogus"}`,
		`[{"status":"new"}]`, `{"status":"new"`, ``,
	} {
		f.Add([]byte(body))
	}
	fields := []string{"status", "resolution"}
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzCheckDecoder(t, body, ParseBugPatch, fields, func(obj map[string]any) []string {
			var bad []string
			if fuzzPresent(obj, "status") && !fuzzOneOf(obj["status"], fuzzStatuses...) {
				bad = append(bad, "status")
			}
			if fuzzPresent(obj, "resolution") && !fuzzOneOf(obj["resolution"], fuzzResolutions...) {
				bad = append(bad, "resolution")
			}
			if !fuzzPresent(obj, "status") && !fuzzPresent(obj, "resolution") {
				bad = append(bad, "status")
			}
			return bad
		}, func(p BugPatch, obj map[string]any) {
			want := BugPatch{Status: fuzzOptional(obj["status"]), Resolution: fuzzOptional(obj["resolution"])}
			if diff := cmp.Diff(want, p); diff != "" {
				t.Fatalf("patch is not what the body says (-want +got):\n%s", diff)
			}
		})
	})
}

func FuzzParseBugInput(f *testing.F) {
	for _, body := range []string{
		`{"campaignId":"cmp_000001","title":"Crash on launch","severity":"critical"}`,
		`{"campaignId":"cmp_000002","testerId":"tst_000001","title":"Typo","description":"In the footer.","severity":"low"}`,
		`{"campaignId":"","title":"t","description":"","severity":"medium"}`,
		`{"campaignId":1,"testerId":2,"title":" ","description":3,"severity":"urgent"}`,
		`{"title":null,"severity":null}`, `{}`, `"bug"`, `{"title":"a",}`,
	} {
		f.Add([]byte(body))
	}
	f.Add([]byte(`{"campaignId":"c","title":"t","severity":"high","description":"` + strings.Repeat("ü", 10001) + `"}`))
	fields := []string{"campaignId", "testerId", "title", "description", "severity"}
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzCheckDecoder(t, body, ParseBugInput, fields, func(obj map[string]any) []string {
			var bad []string
			if _, ok := obj["campaignId"].(string); !ok {
				bad = append(bad, "campaignId")
			}
			if _, ok := obj["testerId"].(string); fuzzPresent(obj, "testerId") && !ok {
				bad = append(bad, "testerId")
			}
			if !fuzzText(obj["title"], 200) {
				bad = append(bad, "title")
			}
			if d, ok := obj["description"].(string); fuzzPresent(obj, "description") && (!ok || utf8.RuneCountInString(d) > 10000) {
				bad = append(bad, "description")
			}
			if !fuzzOneOf(obj["severity"], "low", "medium", "high", "critical") {
				bad = append(bad, "severity")
			}
			return bad
		}, func(in BugInput, obj map[string]any) {
			text := func(name string) string { s, _ := obj[name].(string); return s }
			want := BugInput{
				CampaignID: text("campaignId"), TesterID: text("testerId"), Title: text("title"),
				Description: text("description"), Severity: text("severity"),
			}
			if diff := cmp.Diff(want, in); diff != "" {
				t.Fatalf("bug input is not what the body says (-want +got):\n%s", diff)
			}
		})
	})
}

func FuzzParseWebhookInput(f *testing.F) {
	for _, body := range []string{
		`{"url":"https://example.com/hooks","events":["campaign.created"]}`,
		`{"url":"http://127.0.0.1:9000/in","events":["*","bug.created","*"]}`,
		`{"url":"HTTPS://Example.com","events":["bug.updated","bug.created"]}`,
		`{"url":"ftp://example.com","events":[]}`, `{"url":"/relative","events":["bug.deleted"]}`,
		`{"url":"https://","events":["*"]}`, `{"url":"https://exa mple.com","events":"*"}`,
		`{"url":5,"events":[1]}`, `{"url":null,"events":null}`, `{}`, `true`,
	} {
		f.Add([]byte(body))
	}
	f.Add([]byte(`{"url":"https://example.com/` + strings.Repeat("a", 2030) + `","events":["*"]}`))
	fields := []string{"url", "events"}
	eventTypes := []string{"campaign.created", "bug.created", "bug.updated", "*"}
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzCheckDecoder(t, body, ParseWebhookInput, fields, func(obj map[string]any) []string {
			var bad []string
			raw, ok := obj["url"].(string)
			u, err := url.Parse(raw)
			if !ok || len(raw) > 2048 || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
				bad = append(bad, "url")
			}
			events, ok := obj["events"].([]any)
			ok = ok && len(events) > 0
			for _, e := range events {
				ok = ok && fuzzOneOf(e, eventTypes...)
			}
			if !ok {
				bad = append(bad, "events")
			}
			return bad
		}, func(in WebhookInput, obj map[string]any) {
			want := WebhookInput{URL: obj["url"].(string)}
			for _, e := range obj["events"].([]any) {
				if !slices.Contains(want.Events, e.(string)) {
					want.Events = append(want.Events, e.(string))
				}
			}
			if diff := cmp.Diff(want, in); diff != "" {
				t.Fatalf("webhook input is not what the body says, once per event (-want +got):\n%s", diff)
			}
		})
	})
}

func FuzzParseClockMove(f *testing.F) {
	for _, body := range []string{
		`{"advance":"90s"}`, `{"advance":"1h30m"}`, `{"advance":"8784h"}`, `{"advance":"8784h0m0.000000001s"}`,
		`{"advance":"0s"}`, `{"advance":"-1h"}`, `{"advance":"1d"}`, `{"advance":90}`, `{"advance":""}`, `{}`, `[`,
	} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzCheckDecoder(t, body, ParseClockMove, []string{"advance"}, func(obj map[string]any) []string {
			s, ok := obj["advance"].(string)
			d, err := time.ParseDuration(s)
			if !ok || err != nil || d <= 0 || d > 366*24*time.Hour {
				return []string{"advance"}
			}
			return nil
		}, func(d time.Duration, obj map[string]any) {
			if want, _ := time.ParseDuration(obj["advance"].(string)); d != want {
				t.Fatalf("moves the clock by %s, body says %s", d, want)
			}
		})
	})
}

func FuzzParsePageRequest(f *testing.F) {
	cursor := func(seq uint64) string { return *NewPage([]int{1}, true, seq).NextCursor }
	for _, seed := range []struct{ limit, cursor string }{
		{"", ""}, {"1", ""}, {"100", cursor(7)}, {"20", cursor(1)}, {"0", ""}, {"101", ""}, {"-3", ""},
		{"ten", ""}, {"+5", ""}, {"", "YzEuMA"}, {"", "!!!"}, {"", base64.RawURLEncoding.EncodeToString([]byte("c2.5"))},
		{"", cursor(1<<64 - 1)},
	} {
		f.Add(seed.limit, seed.cursor)
	}
	f.Fuzz(func(t *testing.T, limit, cursor string) {
		got, err := ParsePageRequest(limit, cursor)
		again, againErr := ParsePageRequest(limit, cursor)
		if got != again || (err == nil) != (againErr == nil) {
			t.Fatalf("same query, different results: %+v, %v then %+v, %v", got, err, again, againErr)
		}
		if err != nil {
			fuzzCheckRefusal(t, err, []string{ErrInvalidParameter}, nil)
			return
		}
		if n, convErr := strconv.Atoi(limit); got.Limit < 1 || got.Limit > 100 || (limit == "" && got.Limit != 20) || (limit != "" && (convErr != nil || n != got.Limit)) {
			t.Fatalf("limit %q gives page size %d", limit, got.Limit)
		}
		if (cursor == "") != (got.Before == 0) {
			t.Fatalf("cursor %q gives start %d", cursor, got.Before)
		}
		if cursor == "" {
			return
		}
		// A cursor the API accepts must point where the API's own cursor
		// for that place points.
		next := NewPage([]int{1}, true, got.Before).NextCursor
		back, err := ParsePageRequest("", *next)
		if err != nil || back.Before != got.Before {
			t.Fatalf("cursor %q starts at %d, but the API's cursor for it, %q, starts at %d (%v)", cursor, got.Before, *next, back.Before, err)
		}
	})
}

// fuzzMoves is the lifecycle table of docs/contract.md (BUG-8 to BUG-12), restated so that the test
// does not take bug.go's word for it.
var fuzzMoves = map[[2]string]bool{
	{"new", "confirmed"}:         true,
	{"new", "closed"}:            true,
	{"confirmed", "in_progress"}: true,
	{"confirmed", "resolved"}:    true,
	{"confirmed", "closed"}:      true,
	{"in_progress", "resolved"}:  true,
	{"in_progress", "closed"}:    true,
	{"resolved", "closed"}:       true,
	{"resolved", "confirmed"}:    true,
	{"closed", "confirmed"}:      true,
}

func fuzzDone(status string) bool { return status == "resolved" || status == "closed" }

// fuzzApply is what docs/contract.md says a patch does to a bug: the status and
// resolution it leaves, or ok=false for a 409.
func fuzzApply(from string, resolution, toStatus, toResolution *string) (string, *string, bool) {
	to := from
	if toStatus != nil {
		to = *toStatus
	}
	moving := to != from
	switch {
	case moving && !fuzzMoves[[2]string{from, to}]:
		return "", nil, false
	case moving && fuzzDone(from) && !fuzzDone(to):
		// Reopening clears the resolution; sending one with it is a mistake.
		return to, nil, toResolution == nil
	case fuzzDone(to) && toResolution != nil:
		return to, toResolution, true
	case fuzzDone(to):
		return to, resolution, resolution != nil
	default:
		return to, nil, toResolution == nil
	}
}

func FuzzBugApply(f *testing.F) {
	for from := range fuzzStatuses {
		for to := range len(fuzzStatuses) + 1 {
			f.Add(uint8(from), uint8(0), uint8(to), uint8(0))
			f.Add(uint8(from), uint8(1), uint8(to), uint8(2))
		}
	}
	created := At(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	now := created.Add(time.Hour)
	// pick reads a fuzzed byte as one of values, or as nil for 0 when the
	// field is optional.
	pick := func(b uint8, values []string, optional bool) *string {
		if optional {
			if b%uint8(len(values)+1) == 0 {
				return nil
			}
			return &values[int(b)%(len(values)+1)-1]
		}
		return &values[int(b)%len(values)]
	}
	f.Fuzz(func(t *testing.T, from, resolution, toStatus, toResolution uint8) {
		bug := Bug{
			ID: "bug_000001", CampaignID: "cmp_000001", TesterID: "tst_000001", Title: "t", Severity: "low",
			Status: *pick(from, fuzzStatuses, false), CreatedAt: created, UpdatedAt: created, Seq: 1,
		}
		// Only done bugs carry a resolution: the store never holds another kind.
		if fuzzDone(bug.Status) {
			res := *pick(resolution, fuzzResolutions, false)
			bug.Resolution = &res
		}
		patch := BugPatch{Status: pick(toStatus, fuzzStatuses, true), Resolution: pick(toResolution, fuzzResolutions, true)}
		before := bug
		before.Resolution = fuzzOptional(fuzzValue(bug.Resolution))

		got, changed, err := bug.Apply(patch, now)
		if diff := cmp.Diff(before, bug); diff != "" {
			t.Fatalf("Apply changed the bug it was called on (-before +after):\n%s", diff)
		}
		wantStatus, wantResolution, ok := fuzzApply(bug.Status, bug.Resolution, patch.Status, patch.Resolution)
		describe := func() string {
			return bug.Status + " (" + fuzzShow(bug.Resolution) + ") with status " + fuzzShow(patch.Status) + ", resolution " + fuzzShow(patch.Resolution)
		}
		if !ok {
			if err == nil {
				t.Fatalf("%s: allowed, want 409", describe())
			}
			if apiErr := AsError(err); apiErr.Code != ErrInvalidStatusTransition {
				t.Fatalf("%s: %s, want INVALID_STATUS_TRANSITION", describe(), apiErr.Code)
			}
			if changed || !cmp.Equal(got, bug) {
				t.Fatalf("%s: refused, yet returns changed=%v and %+v", describe(), changed, got)
			}
			return
		}
		if err != nil {
			t.Fatalf("%s: %v, want it allowed", describe(), err)
		}
		want := bug
		want.Status, want.Resolution = wantStatus, wantResolution
		wantChanged := want.Status != bug.Status || fuzzShow(want.Resolution) != fuzzShow(bug.Resolution)
		if wantChanged {
			want.UpdatedAt = now
		}
		if diff := cmp.Diff(want, got); diff != "" || changed != wantChanged {
			t.Fatalf("%s: changed=%v, want %v (-want +got):\n%s", describe(), changed, wantChanged, diff)
		}
		if fuzzDone(got.Status) != (got.Resolution != nil) {
			t.Fatalf("%s: leaves a %s bug with resolution %s", describe(), got.Status, fuzzShow(got.Resolution))
		}
	})
}

// fuzzValue reads an optional string the way fuzzOptional writes one, so a
// copy of a bug does not share its resolution.
func fuzzValue(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func fuzzShow(s *string) string {
	if s == nil {
		return "none"
	}
	return *s
}
