// Package steps is the Gherkin step library: the catalogue of step
// patterns and the per-scenario state the steps act on, with the webhook
// receiver the delivery steps listen on.
package steps

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"github.com/testcampaign/kit/conformance/rules"
	"github.com/testcampaign/kit/conformance/wire"
)

// StepDoc documents one step of the library for people writing features.
type StepDoc struct {
	Pattern string // the regular expression godog matches
	Example string // a step as it would appear in a .feature file
}

type StepDef struct {
	StepDoc
	fn any
}

// StepDefs is the whole library. It is built on each call so that no step
// table is shared, let alone mutated, between runs.
func StepDefs() []StepDef {
	d := func(pattern, example string, fn any) StepDef {
		return StepDef{StepDoc{pattern, example}, fn}
	}
	return []StepDef{
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
		d(`^I save the header "([^"]*)" as "([^"]*)"$`, `When I save the header "X-RateLimit-Limit" as "limit"`, saveHeader),
		d(`^I send (\d+) ([A-Z]+) requests to "([^"]*)" with the body '(.*)'$`, `When I send 21 POST requests to "/v1/campaigns" with the body '{"name": "Page", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'`, sendManyWithBody),
		d(`^within (\d+) seconds the ([A-Z]+) request to "([^"]*)" should answer with the JSON at "([^"]*)" equal to (.+)$`, `Then within 5 seconds the GET request to "/v1/bugs/{bugId}" should answer with the JSON at "data.status" equal to "closed"`, eventually),
		d(`^a bug with status "([^"]*)"$`, `Given a bug with status "resolved"`, bugWithStatus),

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
		d(`^the response body should contain "(.*)"$`, `Then the response body should contain "7.50"`, bodyContains),

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
		d(`^the JSON at "([^"]*)" should have (\d+) items?$`, `Then the JSON at "data.items" should have 2 items`, jsonLen),
		d(`^the JSON at "([^"]*)" should have at least (\d+) items?$`, `Then the JSON at "data.items" should have at least 3 items`, jsonMinLen),
		d(`^the JSON at "([^"]*)" should have at most (\d+) items?$`, `Then the JSON at "data.items" should have at most 20 items`, jsonMaxLen),
		d(`^the JSON at "([^"]*)" should be a timestamp in UTC with milliseconds$`, `Then the JSON at "data.createdAt" should be a timestamp in UTC with milliseconds`, jsonTimestampMillis),
		d(`^every timestamp in the response should be in UTC with milliseconds$`, `Then every timestamp in the response should be in UTC with milliseconds`, everyTimestampMillis),
		d(`^the (JSON at|header) "([^"]*)" should be (less than|at most|greater than|at least|equal to|not equal to) (.+)$`, `Then the JSON at "data.updatedAt" should be at least the JSON at "data.createdAt"`, compareStep),
		d(`^the JSON at "([^"]*)" should match:$`, "Then the JSON at \"data\" should match:\n  \"\"\"\n  {\"id\": \"<id>\", \"status\": \"draft\", \"createdAt\": \"<timestamp>\"}\n  \"\"\"", jsonMatches),
		d(`^the JSON at "([^"]*)" should contain "([^"]*)"$`, `Then the JSON at "data.events" should contain "bug.created"`, jsonContains),
		d(`^the JSON at "([^"]*)" should contain:$`, "Then the JSON at \"data.items\" should contain:\n  \"\"\"\n  {\"id\": \"{campaignId}\", \"status\": \"draft\"}\n  \"\"\"", jsonContainsDoc),
		d(`^the JSON at "([^"]*)" should be empty$`, `Then the JSON at "data.items" should be empty`, jsonEmpty),
		d(`^the JSON at "([^"]*)" should not be empty$`, `Then the JSON at "data.items" should not be empty`, jsonNotEmpty),
		d(`^each of the last (\d+) responses should have status (\d+)$`, `Then each of the last 3 responses should have status 200`, lastStatuses),
		d(`^every item at "([^"]*)" should have "([^"]*)" equal to "([^"]*)"$`, `Then every item at "data.items" should have "status" equal to "new"`, everyItemHas),
		d(`^the items at "([^"]*)" should include one with "([^"]*)" equal to "([^"]*)"$`, `Then the items at "data.items" should include one with "id" equal to "{campaignId}"`, itemsInclude),
		d(`^no item at "([^"]*)" should have "([^"]*)" equal to "([^"]*)"$`, `Then no item at "items" should have "id" equal to "{campaignId}"`, noItemHas),
		d(`^the items at "([^"]*)" should be ordered by "([^"]*)" (ascending|descending)$`, `Then the items at "data.items" should be ordered by "createdAt" descending`, itemsOrdered),

		// Lists walked end to end (their items are then checked at "items").
		d(`^walking "([^"]*)" with limit (\d+) should give every item once, newest first$`, `Then walking "/v1/campaigns" with limit 2 should give every item once, newest first`, walkComplete),
		d(`^filtering by "([^"]*)" = "([^"]*)" on "([^"]*)" should give exactly the matching items(?: by "([^"]*)")?$`, `Then filtering by "platform" = "ios" on "/v1/testers" should give exactly the matching items by "platforms"`, filterExact),

		// Webhooks, delivered to conform's own receiver.
		d(`^I register (?:a|(\d+)) webhooks? for "([^"]*)"$`, `Given I register a webhook for "campaign.created, bug.created"`, registerWebhook),
		d(`^the receiver answers (\d+) to the next (\d+) deliver(?:y|ies)$`, `Given the receiver answers 500 to the next 1 delivery`, receiverFails),
		d(`^within (\d+) seconds the receiver should get a "([^"]*)" event$`, `Then within 5 seconds the receiver should get a "campaign.created" event`, awaitEvent),
		d(`^within (\d+) seconds the receiver should get the same event again$`, `Then within 10 seconds the receiver should get the same event again`, awaitRetry),
		d(`^the receiver should have got no "([^"]*)" event$`, `Then the receiver should have got no "campaign.created" event`, noEvent),
		d(`^the receiver should have got exactly (\d+) "([^"]*)" deliver(?:y|ies)$`, `Then the receiver should have got exactly 1 "campaign.created" delivery`, exactDeliveries),
		d(`^no further "([^"]*)" delivery should reach the receiver within (\d+) seconds?$`, `Then no further "campaign.created" delivery should reach the receiver within 2 seconds`, noFurtherDelivery),
		d(`^the delivery should be signed with the webhook's secret$`, `Then the delivery should be signed with the webhook's secret`, deliverySigned),

		// What must come back: headers.
		d(`^the header "([^"]*)" should be "([^"]*)"$`, `Then the header "X-RateLimit-Limit" should be "1000"`, headerIs),
		d(`^the header "([^"]*)" should contain "([^"]*)"$`, `Then the header "WWW-Authenticate" should contain "Bearer"`, headerContains),
		d(`^the header "([^"]*)" should be present$`, `Then the header "Allow" should be present`, headerPresent),
		d(`^the header "([^"]*)" should be absent$`, `Then the header "WWW-Authenticate" should be absent`, headerAbsent),
		d(`^the header "([^"]*)" should not be "([^"]*)"$`, `Then the header "Webhook-Id" should not be "{firstWebhookId}"`, headerIsNot),
		d(`^the header "([^"]*)" should be an integer$`, `Then the header "Retry-After" should be an integer`, headerInteger),

		// Rate limits (spec section 8).
		d(`^the rate-limit headers should be present as integers$`, `Then the rate-limit headers should be present as integers`, rateHeadersIntegers),
		d(`^X-RateLimit-Remaining should not exceed X-RateLimit-Limit$`, `Then X-RateLimit-Remaining should not exceed X-RateLimit-Limit`, remainingWithinLimit),
		d(`^X-RateLimit-Limit should not exceed the published limits$`, `Then X-RateLimit-Limit should not exceed the published limits`, limitPublished),
		d(`^X-RateLimit-Reset should be a plausible reset time$`, `Then X-RateLimit-Reset should be a plausible reset time`, resetPlausible),
		d(`^X-RateLimit-Reset should be a Unix time in seconds within (\d+) seconds of the server's clock$`, `Then X-RateLimit-Reset should be a Unix time in seconds within 60 seconds of the server's clock`, resetUnixWithin),
		d(`^X-RateLimit-Reset should be the end of the server's current UTC minute, hour or day$`, `Then X-RateLimit-Reset should be the end of the server's current UTC minute, hour or day`, resetEndsWindow),
		d(`^X-RateLimit-Reset should fall on a whole UTC minute$`, `Then X-RateLimit-Reset should fall on a whole UTC minute`, resetOnMinute),
		d(`^X-RateLimit-Remaining should have decreased since the previous response$`, `Then X-RateLimit-Remaining should have decreased since the previous response`, remainingDecreased),
		d(`^X-RateLimit-Remaining should be unchanged since the previous response$`, `Then X-RateLimit-Remaining should be unchanged since the previous response`, remainingUnchanged),
		d(`^X-RateLimit-Limit should be unchanged since the previous response$`, `Then X-RateLimit-Limit should be unchanged since the previous response`, limitUnchanged),
	}
}

// Steps documents every step pattern of the library, in catalogue order.
func Steps() []StepDoc {
	defs := StepDefs()
	docs := make([]StepDoc, len(defs))
	for i, d := range defs {
		docs[i] = d.StepDoc
	}
	return docs
}

// compiledStep is a step ready for godog. Compiling once per run matters:
// godog would otherwise compile every pattern again for every scenario.
type compiledStep struct {
	Re *regexp.Regexp
	fn any
}

func CompileSteps() []compiledStep {
	defs := StepDefs()
	out := make([]compiledStep, len(defs))
	for i, d := range defs {
		out[i] = compiledStep{regexp.MustCompile(d.Pattern), d.fn}
	}
	return out
}

func RegisterSteps(sc *godog.ScenarioContext, steps []compiledStep) {
	for _, st := range steps {
		sc.Step(st.Re, st.fn)
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
	if s.t.Profile != wire.ProfileSandbox {
		return fmt.Errorf("%w: a fresh account exists only in the sandbox; tag the scenario @sandbox", wire.ErrUsage)
	}
	s.key = wire.TestPrefix + "conform_" + wire.RandomToken()
	s.t.Model.Own(s.key, true)
	s.freshLeft = -1
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
	p, err := s.expandTarget(path)
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

// burstFits says whether a burst of remaining requests, each taking about
// roundTrip, ends with time to spare in a window that has left to run.
func burstFits(left time.Duration, remaining int, roundTrip time.Duration) bool {
	return left >= time.Duration(remaining+2)*roundTrip+burstMargin
}

// burstMargin is the least time a burst wants left in its window beyond its
// estimated length: the Date header the server's clock is read from is
// truncated to the second.
const burstMargin = 2 * time.Second

// exhaust spends what X-RateLimit-Remaining announces and then one request
// more. It stops early at the first 429, since a shared key may have been
// spent by someone else meanwhile. Only the last two exchanges are kept: the
// last one allowed and the first one over the limit.
func exhaust(ctx context.Context, method, path string) error {
	s := stateFrom(ctx)
	p, err := s.expandTarget(path)
	if err != nil {
		return err
	}
	start := len(s.history)
	sent := time.Now()
	first, err := s.send(ctx, method, p, nil, "")
	if err != nil {
		return err
	}
	remaining, err := rules.IntHeader(first, "X-RateLimit-Remaining")
	if err != nil {
		return err
	}
	// A burst that straddles the end of the window it spends proves
	// nothing: the steps after it would meet a fresh window. So a burst
	// that might not fit in what is left of the window waits for the next.
	if left, ok := rules.WindowLeft(first); ok && first.Status != http.StatusTooManyRequests {
		if !burstFits(left, remaining, time.Since(sent)) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(left + time.Second):
			}
			if first, err = s.send(ctx, method, p, nil, ""); err != nil {
				return err
			}
			if remaining, err = rules.IntHeader(first, "X-RateLimit-Remaining"); err != nil {
				return err
			}
		}
	}
	if remaining > maxExhaust {
		return fmt.Errorf("X-RateLimit-Remaining is %d; the kit spends at most %d requests in one burst", remaining, maxExhaust)
	}
	for i := 0; i <= remaining && first.Status != http.StatusTooManyRequests; i++ {
		e, err := s.send(ctx, method, p, nil, "")
		if err != nil {
			return err
		}
		if e.Status == http.StatusTooManyRequests {
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
