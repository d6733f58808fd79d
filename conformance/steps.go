package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/cucumber/godog"
)

// StepDoc documents one step of the library for people writing features.
type StepDoc struct {
	Pattern string // the regular expression godog matches
	Example string // a step as it would appear in a .feature file
}

type stepDef struct {
	StepDoc
	fn any
}

// stepDefs is the whole library. It is built on each call so that no step
// table is shared, let alone mutated, between runs.
func stepDefs() []stepDef {
	d := func(pattern, example string, fn any) stepDef {
		return stepDef{StepDoc{pattern, example}, fn}
	}
	return []stepDef{
		// Who is asking.
		d(`^I am not authenticated$`, `Given I am not authenticated`, notAuthenticated),
		d(`^I use the Authorization header "([^"]*)"$`, `Given I use the Authorization header "bearer {key}"`, useAuthorization),
		d(`^I use the API key "([^"]*)"$`, `Given I use the API key "svc_test_expired{random}"`, useAPIKey),
		d(`^a fresh sandbox account$`, `Given a fresh sandbox account`, freshAccount),
		d(`^I set the request header "([^"]*)" to "([^"]*)"$`, `Given I set the request header "Accept-Language" to "en"`, setHeader),

		// What is sent.
		d(`^I send a ([A-Z]+) request to "([^"]*)"$`, `When I send a GET request to "/v1/campaigns/{campaignId}"`, sendPlain),
		d(`^I send a ([A-Z]+) request to "([^"]*)" with JSON:$`, "When I send a POST request to \"/v1/campaigns\" with JSON:\n  \"\"\"\n  {\"name\": \"Beta\", \"platform\": \"ios\", \"testersRequired\": 5, \"rewardPerBug\": 19.99}\n  \"\"\"", sendJSONDoc),
		d(`^I send a ([A-Z]+) request to "([^"]*)" with the body '(.*)'$`, `When I send a POST request to "/v1/campaigns" with the body '{"name": '`, sendInline),
		d(`^I send a ([A-Z]+) request to "([^"]*)" with a "([^"]*)" body:$`, "When I send a POST request to \"/v1/campaigns\" with a \"text/plain\" body:\n  \"\"\"\n  name=Beta\n  \"\"\"", sendTyped),
		d(`^I send a ([A-Z]+) request to "([^"]*)" with a JSON body of (\d+) bytes$`, `When I send a POST request to "/v1/campaigns" with a JSON body of 1100000 bytes`, sendLarge),
		d(`^I send (\d+) ([A-Z]+) requests to "([^"]*)"$`, `When I send 3 GET requests to "/v1/campaigns"`, sendMany),
		d(`^I send ([A-Z]+) requests to "([^"]*)" until the rate limit is exceeded$`, `When I send GET requests to "/v1/campaigns" until the rate limit is exceeded`, exhaust),
		d(`^I save the JSON at "([^"]*)" as "([^"]*)"$`, `When I save the JSON at "data.id" as "campaignId"`, saveJSON),
		d(`^I save "([^"]*)" as "([^"]*)"$`, `Given I save "svc_live_{random}" as "liveKey"`, saveText),

		// What must come back: status and envelope.
		d(`^the response status should be (\d+)$`, `Then the response status should be 200`, statusIs),
		d(`^the response status should be one of "([^"]*)"$`, `Then the response status should be one of "400, 401, 403"`, statusOneOf),
		d(`^the response should not be successful$`, `Then the response should not be successful`, notSuccessful),
		d(`^the response should be an envelope$`, `Then the response should be an envelope`, envelopeAny),
		d(`^the response should be a success envelope$`, `Then the response should be a success envelope`, envelopeSuccess),
		d(`^the response should be an error envelope$`, `Then the response should be an error envelope`, envelopeError),
		d(`^the error code should be "([^"]*)"$`, `Then the error code should be "INVALID_API_KEY"`, errorCode),
		d(`^the response should be JSON$`, `Then the response should be JSON`, isJSONResponse),
		d(`^the response body should not contain "([^"]*)"$`, `Then the response body should not contain "{liveKey}"`, bodyLacks),

		// What must come back: the body, by path.
		d(`^the JSON at "([^"]*)" should be "([^"]*)"$`, `Then the JSON at "data.status" should be "draft"`, jsonIsString),
		d(`^the JSON at "([^"]*)" should equal (true|false|null|-?[0-9][0-9.eE+-]*|".*"|\[.*\]|\{.*\})$`, `Then the JSON at "data.rewardPerBug" should equal 19.99`, jsonEquals),
		d(`^the JSON at "([^"]*)" should equal the saved "([^"]*)"$`, `Then the JSON at "data.id" should equal the saved "campaignId"`, jsonEqualsSaved),
		d(`^the JSON at "([^"]*)" should not equal the saved "([^"]*)"$`, `Then the JSON at "data.items.0.id" should not equal the saved "firstId"`, jsonNotEqualsSaved),
		d(`^the JSON at "([^"]*)" should be an? (string|integer|number|boolean|object|array|null|timestamp)$`, `Then the JSON at "data.testersRequired" should be an integer`, jsonIsType),
		d(`^the JSON at "([^"]*)" should be one of "([^"]*)"$`, `Then the JSON at "data.status" should be one of "draft, active"`, jsonOneOf),
		d(`^the JSON at "([^"]*)" should start with "([^"]*)"$`, `Then the JSON at "data.id" should start with "cmp_"`, jsonStartsWith),
		d(`^the JSON at "([^"]*)" should exist$`, `Then the JSON at "error.details" should exist`, jsonExists),
		d(`^the JSON at "([^"]*)" should not exist$`, `Then the JSON at "error" should not exist`, jsonNotExists),
		d(`^the JSON at "([^"]*)" should have (\d+) items?$`, `Then the JSON at "data.items" should have 1 item`, jsonLen),
		d(`^the JSON at "([^"]*)" should have at least (\d+) items?$`, `Then the JSON at "data.items" should have at least 3 items`, jsonMinLen),
		d(`^the JSON at "([^"]*)" should match:$`, "Then the JSON at \"data\" should match:\n  \"\"\"\n  {\"id\": \"<id>\", \"status\": \"draft\", \"createdAt\": \"<timestamp>\"}\n  \"\"\"", jsonMatches),
		d(`^every item at "([^"]*)" should have "([^"]*)" equal to "([^"]*)"$`, `Then every item at "data.items" should have "status" equal to "new"`, everyItemHas),
		d(`^the items at "([^"]*)" should include one with "([^"]*)" equal to "([^"]*)"$`, `Then the items at "data.items" should include one with "id" equal to "{campaignId}"`, itemsInclude),
		d(`^the items at "([^"]*)" should be ordered by "([^"]*)" descending$`, `Then the items at "data.items" should be ordered by "createdAt" descending`, itemsDescending),

		// What must come back: headers.
		d(`^the header "([^"]*)" should be "([^"]*)"$`, `Then the header "X-RateLimit-Limit" should be "1000"`, headerIs),
		d(`^the header "([^"]*)" should contain "([^"]*)"$`, `Then the header "WWW-Authenticate" should contain "Bearer"`, headerContains),
		d(`^the header "([^"]*)" should be present$`, `Then the header "Allow" should be present`, headerPresent),
		d(`^the header "([^"]*)" should be an integer$`, `Then the header "Retry-After" should be an integer`, headerInteger),

		// Rate limits (spec section 8).
		d(`^the rate-limit headers should be present as integers$`, `Then the rate-limit headers should be present as integers`, rateHeadersIntegers),
		d(`^X-RateLimit-Remaining should not exceed X-RateLimit-Limit$`, `Then X-RateLimit-Remaining should not exceed X-RateLimit-Limit`, remainingWithinLimit),
		d(`^X-RateLimit-Limit should be one of the published limits$`, `Then X-RateLimit-Limit should be one of the published limits`, limitPublished),
		d(`^X-RateLimit-Reset should be a plausible reset time$`, `Then X-RateLimit-Reset should be a plausible reset time`, resetPlausible),
		d(`^X-RateLimit-Reset should be a Unix time in seconds within (\d+) seconds from now$`, `Then X-RateLimit-Reset should be a Unix time in seconds within 60 seconds from now`, resetUnixWithin),
		d(`^X-RateLimit-Remaining should have decreased since the previous response$`, `Then X-RateLimit-Remaining should have decreased since the previous response`, remainingDecreased),
		d(`^X-RateLimit-Remaining should be unchanged since the previous response$`, `Then X-RateLimit-Remaining should be unchanged since the previous response`, remainingUnchanged),
		d(`^X-RateLimit-Limit should be unchanged since the previous response$`, `Then X-RateLimit-Limit should be unchanged since the previous response`, limitUnchanged),
	}
}

// Steps documents every step pattern of the library, in catalogue order.
func Steps() []StepDoc {
	defs := stepDefs()
	docs := make([]StepDoc, len(defs))
	for i, d := range defs {
		docs[i] = d.StepDoc
	}
	return docs
}

// compiledStep is a step ready for godog. Compiling once per run matters:
// godog would otherwise compile every pattern again for every scenario.
type compiledStep struct {
	re *regexp.Regexp
	fn any
}

func compileSteps() []compiledStep {
	defs := stepDefs()
	out := make([]compiledStep, len(defs))
	for i, d := range defs {
		out[i] = compiledStep{regexp.MustCompile(d.Pattern), d.fn}
	}
	return out
}

func registerSteps(sc *godog.ScenarioContext, steps []compiledStep) {
	for _, st := range steps {
		sc.Step(st.re, st.fn)
	}
}

// --- who is asking ---

func notAuthenticated(ctx context.Context) error {
	stateFrom(ctx).auth = authNone
	return nil
}

func useAuthorization(ctx context.Context, value string) error {
	s := stateFrom(ctx)
	v, err := s.expand(value)
	if err != nil {
		return err
	}
	s.auth, s.rawAuth = authRaw, v
	return nil
}

func useAPIKey(ctx context.Context, key string) error {
	s := stateFrom(ctx)
	k, err := s.expand(key)
	if err != nil {
		return err
	}
	s.auth, s.rawAuth = authRaw, "Bearer "+k
	return nil
}

// freshAccount switches the scenario to a random test key. In the sandbox each
// key is its own seeded account with its own rate-limit counters, so scenarios
// that need known data or a whole window do not disturb each other.
func freshAccount(ctx context.Context) error {
	s := stateFrom(ctx)
	if s.t.profile != ProfileSandbox {
		return fmt.Errorf("%w: a fresh account exists only in the sandbox; tag the scenario @sandbox", ErrUsage)
	}
	s.key = TestPrefix + "conform_" + randomToken()
	s.auth = authConfigured
	return nil
}

func setHeader(ctx context.Context, name, value string) error {
	s := stateFrom(ctx)
	v, err := s.expand(value)
	if err != nil {
		return err
	}
	s.headers.Set(name, v)
	return nil
}

// --- what is sent ---

func sendPlain(ctx context.Context, method, path string) error {
	return sendBody(ctx, method, path, nil, "")
}

func sendJSONDoc(ctx context.Context, method, path string, doc *godog.DocString) error {
	return sendBody(ctx, method, path, []byte(doc.Content), "application/json")
}

func sendInline(ctx context.Context, method, path, body string) error {
	if body == "" {
		return sendBody(ctx, method, path, nil, "")
	}
	return sendBody(ctx, method, path, []byte(body), "application/json")
}

func sendTyped(ctx context.Context, method, path, contentType string, doc *godog.DocString) error {
	return sendBody(ctx, method, path, []byte(doc.Content), contentType)
}

// sendLarge sends a syntactically valid JSON object of the given size, so that
// only its size can be the reason for a refusal.
func sendLarge(ctx context.Context, method, path string, size int) error {
	const head, tail = `{"name": "`, `"}`
	n := size - len(head) - len(tail)
	if n < 0 {
		n = 0
	}
	body := head + strings.Repeat("a", n) + tail
	return sendBody(ctx, method, path, []byte(body), "application/json")
}

func sendBody(ctx context.Context, method, path string, body []byte, contentType string) error {
	s := stateFrom(ctx)
	p, err := s.expand(path)
	if err != nil {
		return err
	}
	if body != nil {
		b, err := s.expand(string(body))
		if err != nil {
			return err
		}
		body = []byte(b)
	}
	_, err = s.send(ctx, method, p, body, contentType)
	return err
}

func sendMany(ctx context.Context, n int, method, path string) error {
	for i := 0; i < n; i++ {
		if err := sendPlain(ctx, method, path); err != nil {
			return err
		}
	}
	return nil
}

// maxExhaust bounds a burst so that a deployment announcing an absurd
// remaining count cannot keep the kit busy for hours.
const maxExhaust = 200_000

// exhaust spends what X-RateLimit-Remaining announces and then one request
// more. It stops early at the first 429, since a shared key may have been
// spent by someone else meanwhile. Only the last two exchanges are kept: the
// last one allowed and the first one over the limit.
func exhaust(ctx context.Context, method, path string) error {
	s := stateFrom(ctx)
	p, err := s.expand(path)
	if err != nil {
		return err
	}
	start := len(s.history)
	first, err := s.send(ctx, method, p, nil, "")
	if err != nil {
		return err
	}
	remaining, err := intHeader(first, "X-RateLimit-Remaining")
	if err != nil {
		return err
	}
	if remaining > maxExhaust {
		return fmt.Errorf("X-RateLimit-Remaining is %d; the kit spends at most %d requests in one burst", remaining, maxExhaust)
	}
	for i := 0; i <= remaining && first.status != http.StatusTooManyRequests; i++ {
		e, err := s.send(ctx, method, p, nil, "")
		if err != nil {
			return err
		}
		if e.status == http.StatusTooManyRequests {
			break
		}
		if n := len(s.history); n-start > 2 {
			s.history = append(s.history[:start], s.history[n-2:]...)
		}
	}
	return nil
}

func saveJSON(ctx context.Context, path, name string) error {
	s := stateFrom(ctx)
	v, err := valueAt(s, path)
	if err != nil {
		return err
	}
	s.saved[name] = v
	return nil
}

// saveText fixes a value, typically one with {random}, so that later steps
// can refer to the same value.
func saveText(ctx context.Context, text, name string) error {
	s := stateFrom(ctx)
	v, err := s.expand(text)
	if err != nil {
		return err
	}
	s.saved[name] = v
	return nil
}

// --- status and envelope ---

func lastExchange(ctx context.Context) (*exchange, error) {
	return stateFrom(ctx).last()
}

func statusIs(ctx context.Context, want int) error {
	e, err := lastExchange(ctx)
	if err != nil {
		return err
	}
	if e.status != want {
		return fmt.Errorf("want HTTP status %d, got %d", want, e.status)
	}
	return nil
}

func statusOneOf(ctx context.Context, list string) error {
	e, err := lastExchange(ctx)
	if err != nil {
		return err
	}
	var wants []string
	for _, w := range strings.Split(list, ",") {
		w = strings.TrimSpace(w)
		if w == strconv.Itoa(e.status) {
			return nil
		}
		wants = append(wants, w)
	}
	return fmt.Errorf("want HTTP status one of %s, got %d", strings.Join(wants, ", "), e.status)
}

func notSuccessful(ctx context.Context) error {
	e, err := lastExchange(ctx)
	if err != nil {
		return err
	}
	if e.status >= 200 && e.status < 300 {
		return fmt.Errorf("want a refusal (a non-2xx status), got HTTP %d", e.status)
	}
	if v, err := e.json(); err == nil {
		if m, ok := v.(map[string]any); ok && m["success"] == true {
			return fmt.Errorf("want a refusal, got \"success\": true with HTTP %d", e.status)
		}
	}
	return nil
}

type envelopeKind int

const (
	envelopeEither envelopeKind = iota
	envelopeOK
	envelopeFailed
)

func envelopeAny(ctx context.Context) error     { return envelopeStep(ctx, envelopeEither) }
func envelopeSuccess(ctx context.Context) error { return envelopeStep(ctx, envelopeOK) }
func envelopeError(ctx context.Context) error   { return envelopeStep(ctx, envelopeFailed) }

func envelopeStep(ctx context.Context, kind envelopeKind) error {
	e, err := lastExchange(ctx)
	if err != nil {
		return err
	}
	return checkEnvelope(e, kind)
}

// checkEnvelope applies the response envelope of spec sections 4 and 7. The
// messages name the rule, since they are what a report shows first.
func checkEnvelope(e *exchange, kind envelopeKind) error {
	ok2xx := e.status >= 200 && e.status < 300
	switch {
	case kind == envelopeOK && !ok2xx:
		return fmt.Errorf("want a successful response (HTTP 200), got HTTP %d", e.status)
	case kind == envelopeFailed && ok2xx:
		return fmt.Errorf("want an error response (non-2xx status), got HTTP %d", e.status)
	}
	v, err := e.json()
	if err != nil {
		return fmt.Errorf("envelope rule (spec §4): every response is a JSON object; %w", err)
	}
	m, isObj := v.(map[string]any)
	if !isObj {
		return fmt.Errorf("envelope rule (spec §4): the body must be a JSON object, got %s", describe(v))
	}
	sv, has := m["success"]
	if !has {
		return fmt.Errorf("envelope rule (spec §4): \"success\" is missing (keys: %s)", keysOf(m))
	}
	success, isBool := sv.(bool)
	if !isBool {
		return fmt.Errorf("envelope rule (spec §4): \"success\" must be a boolean, got %s", describe(sv))
	}
	if success != ok2xx {
		return fmt.Errorf("envelope rule (spec §4, §7): \"success\" is %t on HTTP %d; it must be true exactly on success", success, e.status)
	}
	if success {
		data, has := m["data"]
		if !has {
			return fmt.Errorf("envelope rule (spec §4): a success must carry \"data\" (keys: %s)", keysOf(m))
		}
		if _, isObj := data.(map[string]any); !isObj {
			return fmt.Errorf("envelope rule (spec §4): \"data\" must be an object holding the result, got %s", describe(data))
		}
		return nil
	}
	ev, has := m["error"]
	if !has {
		return fmt.Errorf("error rule (spec §7): a failure must carry \"error\" (keys: %s)", keysOf(m))
	}
	eo, isObj := ev.(map[string]any)
	if !isObj {
		return fmt.Errorf("error rule (spec §7): \"error\" must be an object, got %s", describe(ev))
	}
	if c, ok := eo["code"].(string); !ok || c == "" {
		return fmt.Errorf("error rule (spec §7): \"error.code\" must be a non-empty string, got %s", describeField(eo, "code"))
	}
	if _, ok := eo["message"].(string); !ok {
		return fmt.Errorf("error rule (spec §7): \"error.message\" must be a string, got %s", describeField(eo, "message"))
	}
	st := eo["status"]
	if !isType(st, "integer") {
		return fmt.Errorf("error rule (spec §7): \"error.status\" must be an integer, got %s", describeField(eo, "status"))
	}
	if string(st.(json.Number)) != strconv.Itoa(e.status) {
		return fmt.Errorf("error rule (spec §7): \"error.status\" must repeat the HTTP status %d, got %s", e.status, st)
	}
	return nil
}

func describeField(m map[string]any, k string) string {
	v, ok := m[k]
	if !ok {
		return "nothing (the field is missing)"
	}
	return describe(v)
}

func errorCode(ctx context.Context, code string) error {
	e, err := lastExchange(ctx)
	if err != nil {
		return err
	}
	v, err := e.json()
	if err != nil {
		return err
	}
	got, err := lookup(v, "error.code")
	if err != nil {
		return fmt.Errorf("want error code %q: %w", code, err)
	}
	if got != code {
		return fmt.Errorf("want error code %q, got %s", code, describe(got))
	}
	return nil
}

func isJSONResponse(ctx context.Context) error {
	e, err := lastExchange(ctx)
	if err != nil {
		return err
	}
	ct := e.header.Get("Content-Type")
	media := strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
	if media != "application/json" && !strings.HasSuffix(media, "+json") {
		return fmt.Errorf("want Content-Type application/json, got %q", ct)
	}
	if _, err := e.json(); err != nil {
		return err
	}
	return nil
}

func bodyLacks(ctx context.Context, text string) error {
	s := stateFrom(ctx)
	t, err := s.expand(text)
	if err != nil {
		return err
	}
	e, err := s.last()
	if err != nil {
		return err
	}
	if t != "" && strings.Contains(string(e.body), t) {
		return fmt.Errorf("the body contains %q; want it nowhere in the response", s.t.redact(t))
	}
	return nil
}

// --- body by path ---

func valueAt(s *scenarioState, path string) (any, error) {
	e, err := s.last()
	if err != nil {
		return nil, err
	}
	root, err := e.json()
	if err != nil {
		return nil, err
	}
	return lookup(root, path)
}

func jsonAt(ctx context.Context, path string) (any, error) {
	return valueAt(stateFrom(ctx), path)
}

func jsonIsString(ctx context.Context, path, want string) error {
	s := stateFrom(ctx)
	w, err := s.expand(want)
	if err != nil {
		return err
	}
	got, err := valueAt(s, path)
	if err != nil {
		return err
	}
	if got != w {
		return fmt.Errorf("the JSON at %q: want string %q, got %s", path, w, describe(got))
	}
	return nil
}

func jsonEquals(ctx context.Context, path, literal string) error {
	want, err := parseLiteral(literal)
	if err != nil {
		return err
	}
	return compareAt(ctx, path, want)
}

func jsonEqualsSaved(ctx context.Context, path, name string) error {
	s := stateFrom(ctx)
	want, ok := s.saved[name]
	if !ok {
		return fmt.Errorf("nothing saved as %q (known: %s)", name, s.savedNames())
	}
	return compareAt(ctx, path, want)
}

func jsonNotEqualsSaved(ctx context.Context, path, name string) error {
	s := stateFrom(ctx)
	other, ok := s.saved[name]
	if !ok {
		return fmt.Errorf("nothing saved as %q (known: %s)", name, s.savedNames())
	}
	got, err := jsonAt(ctx, path)
	if err != nil {
		return err
	}
	if matchDiff(other, got) == "" {
		return fmt.Errorf("the JSON at %q: want anything but the saved %q, got %s", path, name, describe(got))
	}
	return nil
}

func compareAt(ctx context.Context, path string, want any) error {
	got, err := jsonAt(ctx, path)
	if err != nil {
		return err
	}
	if d := matchDiff(want, got); d != "" {
		return fmt.Errorf("the JSON at %q differs (-want +got):\n%s", path, d)
	}
	return nil
}

func jsonIsType(ctx context.Context, path, typ string) error {
	got, err := jsonAt(ctx, path)
	if err != nil {
		return err
	}
	if !isType(got, typ) {
		return fmt.Errorf("the JSON at %q: want %s, got %s", path, article(typ), describe(got))
	}
	return nil
}

func article(typ string) string {
	if strings.ContainsAny(typ[:1], "aeiou") {
		return "an " + typ
	}
	return "a " + typ
}

func jsonOneOf(ctx context.Context, path, list string) error {
	got, err := jsonAt(ctx, path)
	if err != nil {
		return err
	}
	var wants []string
	for _, w := range strings.Split(list, ",") {
		w = strings.TrimSpace(w)
		if got == w {
			return nil
		}
		wants = append(wants, strconv.Quote(w))
	}
	return fmt.Errorf("the JSON at %q: want one of %s, got %s", path, strings.Join(wants, ", "), describe(got))
}

func jsonStartsWith(ctx context.Context, path, prefix string) error {
	got, err := jsonAt(ctx, path)
	if err != nil {
		return err
	}
	if s, ok := got.(string); !ok || !strings.HasPrefix(s, prefix) {
		return fmt.Errorf("the JSON at %q: want a string starting with %q, got %s", path, prefix, describe(got))
	}
	return nil
}

func jsonExists(ctx context.Context, path string) error {
	_, err := jsonAt(ctx, path)
	return err
}

func jsonNotExists(ctx context.Context, path string) error {
	s := stateFrom(ctx)
	e, err := s.last()
	if err != nil {
		return err
	}
	root, err := e.json()
	if err != nil {
		return err
	}
	if v, err := lookup(root, path); err == nil {
		return fmt.Errorf("the JSON at %q: want nothing there, got %s", path, describe(v))
	}
	return nil
}

func arrayAt(ctx context.Context, path string) ([]any, error) {
	got, err := jsonAt(ctx, path)
	if err != nil {
		return nil, err
	}
	a, ok := got.([]any)
	if !ok {
		return nil, fmt.Errorf("the JSON at %q: want an array, got %s", path, describe(got))
	}
	return a, nil
}

func jsonLen(ctx context.Context, path string, n int) error {
	a, err := arrayAt(ctx, path)
	if err != nil {
		return err
	}
	if len(a) != n {
		return fmt.Errorf("the JSON at %q: want %d item(s), got %d", path, n, len(a))
	}
	return nil
}

func jsonMinLen(ctx context.Context, path string, n int) error {
	a, err := arrayAt(ctx, path)
	if err != nil {
		return err
	}
	if len(a) < n {
		return fmt.Errorf("the JSON at %q: want at least %d item(s), got %d", path, n, len(a))
	}
	return nil
}

func jsonMatches(ctx context.Context, path string, doc *godog.DocString) error {
	s := stateFrom(ctx)
	text, err := s.expand(doc.Content)
	if err != nil {
		return err
	}
	want, err := decodeJSON([]byte(text))
	if err != nil {
		return fmt.Errorf("the expected document is not JSON: %w", err)
	}
	return compareAt(ctx, path, want)
}

func everyItemHas(ctx context.Context, path, field, want string) error {
	s := stateFrom(ctx)
	w, err := s.expand(want)
	if err != nil {
		return err
	}
	items, err := arrayAt(ctx, path)
	if err != nil {
		return err
	}
	for i, it := range items {
		got, err := lookup(it, field)
		if err != nil || got != w {
			return fmt.Errorf("item %d at %q: want %q = %q, got %s", i, path, field, w, describeLookup(got, err))
		}
	}
	return nil
}

func itemsInclude(ctx context.Context, path, field, want string) error {
	s := stateFrom(ctx)
	w, err := s.expand(want)
	if err != nil {
		return err
	}
	items, err := arrayAt(ctx, path)
	if err != nil {
		return err
	}
	for _, it := range items {
		if got, err := lookup(it, field); err == nil && got == w {
			return nil
		}
	}
	return fmt.Errorf("none of the %d item(s) at %q has %q = %q", len(items), path, field, w)
}

// itemsDescending checks order by a string field (timestamps in one format
// sort as text) or a numeric one; equal neighbours are allowed.
func itemsDescending(ctx context.Context, path, field string) error {
	items, err := arrayAt(ctx, path)
	if err != nil {
		return err
	}
	for i := 1; i < len(items); i++ {
		a, errA := lookup(items[i-1], field)
		b, errB := lookup(items[i], field)
		if errA != nil || errB != nil {
			return fmt.Errorf("items at %q: %q missing in item %d or %d", path, field, i-1, i)
		}
		if less(a, b) {
			return fmt.Errorf("items at %q are not newest first: item %d has %s = %s before item %d with %s", path, i-1, field, describe(a), i, describe(b))
		}
	}
	return nil
}

func less(a, b any) bool {
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok {
			return x < y
		}
	}
	x, ok1 := a.(json.Number)
	y, ok2 := b.(json.Number)
	if ok1 && ok2 {
		fx, _ := x.Float64()
		fy, _ := y.Float64()
		return fx < fy
	}
	// Values of different kinds have no order; the spec promises none.
	return false
}

func describeLookup(v any, err error) string {
	if err != nil {
		return err.Error()
	}
	return describe(v)
}

// --- headers ---

func headerOf(ctx context.Context, name string) (string, *exchange, error) {
	e, err := lastExchange(ctx)
	if err != nil {
		return "", nil, err
	}
	vs := e.header.Values(name)
	if len(vs) == 0 {
		return "", e, fmt.Errorf("the header %s is missing", name)
	}
	return strings.Join(vs, ", "), e, nil
}

func headerIs(ctx context.Context, name, want string) error {
	s := stateFrom(ctx)
	w, err := s.expand(want)
	if err != nil {
		return err
	}
	got, _, err := headerOf(ctx, name)
	if err != nil {
		return err
	}
	if got != w {
		return fmt.Errorf("the header %s: want %q, got %q", name, w, got)
	}
	return nil
}

func headerContains(ctx context.Context, name, want string) error {
	got, _, err := headerOf(ctx, name)
	if err != nil {
		return err
	}
	if !strings.Contains(strings.ToLower(got), strings.ToLower(want)) {
		return fmt.Errorf("the header %s: want it to contain %q, got %q", name, want, got)
	}
	return nil
}

func headerPresent(ctx context.Context, name string) error {
	_, _, err := headerOf(ctx, name)
	return err
}

func headerInteger(ctx context.Context, name string) error {
	e, err := lastExchange(ctx)
	if err != nil {
		return err
	}
	_, err = intHeader(e, name)
	return err
}

// intHeader reads a header the spec types as integer: decimal digits only.
func intHeader(e *exchange, name string) (int, error) {
	vs := e.header.Values(name)
	if len(vs) == 0 {
		return 0, fmt.Errorf("rate-limit rule (spec §8): the header %s is missing", name)
	}
	if len(vs) > 1 {
		return 0, fmt.Errorf("the header %s appears %d times (%q); want one integer", name, len(vs), vs)
	}
	if !isIntegerLiteral(vs[0]) || strings.HasPrefix(vs[0], "-") {
		return 0, fmt.Errorf("rate-limit rule (spec §8): the header %s must be an integer, got %q", name, vs[0])
	}
	n, err := strconv.Atoi(vs[0])
	if err != nil {
		return 0, fmt.Errorf("the header %s: %w", name, err)
	}
	return n, nil
}

// ErrUsage marks a configuration or feature the kit cannot run (a bad flag, a
// feature misusing the step library): the author's mistake, not a deviation
// of the deployment.
var ErrUsage = errors.New("usage error")
