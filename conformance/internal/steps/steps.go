// Package steps is the Gherkin step library: the catalogue of step
// patterns, the per-scenario state the steps act on, with the webhook
// receiver the delivery steps listen on, and that state's godog hooks
// (Library.Initializer), which judge each step and hand the run each
// scenario's result; the runner only wires them to its plan.
package steps

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// What a step takes under it (kit.StepDoc.Takes).
const (
	TakesDocString = "a doc string"
	TakesTable     = "a table"
)

// takes says what a step's function reads from under the step: godog hands
// a doc string or a table to the function's last parameter.
func takes(fn any) string {
	t := reflect.TypeOf(fn)
	if t.NumIn() == 0 {
		return ""
	}
	switch t.In(t.NumIn() - 1) {
	case reflect.TypeFor[*godog.DocString]():
		return TakesDocString
	case reflect.TypeFor[*godog.Table]():
		return TakesTable
	}
	return ""
}

// What steps give and need (kit.StepDoc.Gives, kit.StepDoc.Needs).
const (
	GivesDelivery = "a delivery waited for"
	GivesHeld     = "the receiver holding its answers"
)

type stepDef struct {
	kit.StepDoc
	fn any
}

// stepDefs is the whole library, its steps bound to the scenario s. It is
// built for each scenario, so that no step shares state with another
// scenario; with s nil it serves for the documentation only.
func stepDefs(s *scenarioState) []stepDef {
	d := func(pattern, example string, fn any) stepDef {
		return stepDef{kit.StepDoc{Pattern: pattern, Example: example}, fn}
	}
	sandbox := func(def stepDef) stepDef {
		def.Tags = []string{TagSandbox}
		return def
	}
	needs := func(what string, def stepDef) stepDef {
		def.Needs = what
		return def
	}
	gives := func(what string, def stepDef) stepDef {
		def.Gives = what
		return def
	}
	return append([]stepDef{
		// Who is asking.
		d(`^I am not authenticated$`, `Given I am not authenticated`, s.notAuthenticated),
		d(`^I use the Authorization header "([^"]*)"$`, `Given I use the Authorization header "bearer {key}"`, s.useAuthorization),
		d(`^I use the API key "([^"]*)"$`, `Given I use the API key "svc_test_expired{random}"`, s.useAPIKey),
		sandbox(d(`^a fresh sandbox account$`, `Given a fresh sandbox account`, s.freshAccount)),
		d(`^I set the request header "([^"]*)" to "([^"]*)"$`, `Given I set the request header "Accept-Language" to "en"`, s.setHeader),

		// What is sent.
		d(`^I send a ([A-Z]+) request to "([^"]*)"$`, `When I send a GET request to "/v1/campaigns/{campaignId}"`, s.sendPlain),
		d(`^I send a ([A-Z]+) request to "([^"]*)" with JSON:$`, "When I send a POST request to \"/v1/campaigns\" with JSON:\n  \"\"\"\n  {\"name\": \"Beta\", \"platform\": \"ios\", \"testersRequired\": 5, \"rewardPerBug\": 19.99}\n  \"\"\"", s.sendJSONDoc),
		d(`^I send a ([A-Z]+) request to "([^"]*)" with the body '(.*)'$`, `When I send a POST request to "/v1/campaigns" with the body '{"name": '`, s.sendInline),
		d(`^I send a ([A-Z]+) request to "([^"]*)" with a "([^"]*)" body:$`, "When I send a POST request to \"/v1/campaigns\" with a \"text/plain\" body:\n  \"\"\"\n  name=Beta\n  \"\"\"", s.sendTyped),
		d(`^I send a ([A-Z]+) request to "([^"]*)" with a JSON body of (\d+) bytes$`, `When I send a POST request to "/v1/campaigns" with a JSON body of 1100000 bytes`, s.sendLarge),
		d(`^I send a ([A-Z]+) request to "([^"]*)" padded with "(.)" to a request target of (\d+) bytes$`, `When I send a GET request to "/v1/campaigns/cmp_" padded with "0" to a request target of 8193 bytes`, s.sendPadded),
		d(`^I send a ([A-Z]+) request to "([^"]*)" and give up after (\d+) ms$`, `When I send a GET request to "/v1/testers" and give up after 200 ms`, s.sendGivingUp),
		d(`^I send a ([A-Z]+) request to "([^"]*)" with the body '(.*)' and give up after (\d+) ms$`, `When I send a POST request to "/v1/campaigns" with the body '{"name": "Late", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}' and give up after 300 ms`, s.sendBodyGivingUp),
		d(`^I send (\d+) ([A-Z]+) requests to "([^"]*)" at once, each giving up after (\d+) ms$`, `When I send 9 GET requests to "/v1/testers" at once, each giving up after 4000 ms`, s.sendAtOnceGivingUp),
		d(`^I send (\d+) ([A-Z]+) requests to "([^"]*)"$`, `When I send 3 GET requests to "/v1/campaigns"`, s.sendMany),
		d(`^I send ([A-Z]+) requests to "([^"]*)" until the rate limit is exceeded$`, `When I send GET requests to "/v1/campaigns" until the rate limit is exceeded`, s.exhaust),
		d(`^I save the JSON at "([^"]*)" as "([^"]*)"$`, `When I save the JSON at "data.id" as "campaignId"`, s.saveJSON),
		d(`^I save "([^"]*)" as "([^"]*)"$`, `Given I save "svc_live_{random}" as "liveKey"`, s.saveText),
		d(`^I save "(.)" repeated (\d+) times as "([^"]*)"$`, `Given I save "a" repeated 15872 times as "bigBody"`, s.saveRepeated),
		d(`^I save the "([^"]*)" of a record at "([^"]*)" as "([^"]*)"$`, `When I save the "id" of a record at "data" as "campaignId"`, s.saveRecordField),
		d(`^I save an unknown id of the form of "([^"]*)" as "([^"]*)"$`, `When I save an unknown id of the form of "campaignId" as "unknownId"`, s.saveUnknownID),
		d(`^I change the "([^"]*)" of a record listed at "([^"]*)" to a value its data shows, saving its id as "([^"]*)" and the value as "([^"]*)"$`, `When I change the "status" of a record listed at "/v1/bugs" to a value its data shows, saving its id as "bugId" and the value as "newStatus"`, s.changeListed),
		d(`^I register conform's receiver as a webhook$`, `When I register conform's receiver as a webhook`, s.registerReceiver),
		d(`^I save the header "([^"]*)" as "([^"]*)"$`, `When I save the header "X-RateLimit-Limit" as "limit"`, s.saveHeader),
		d(`^I send (\d+) ([A-Z]+) requests to "([^"]*)" with the body '(.*)'$`, `When I send 21 POST requests to "/v1/campaigns" with the body '{"name": "Page", "platform": "ios", "testersRequired": 1, "rewardPerBug": 1}'`, s.sendManyWithBody),
		d(`^within (\d+) seconds the ([A-Z]+) request to "([^"]*)" should answer with the JSON at "([^"]*)" equal to (.+)$`, `Then within 5 seconds the GET request to "/v1/campaigns/{campaignId}" should answer with the JSON at "data.status" equal to "draft"`, s.eventually),
		sandbox(d(`^a bug with status "([^"]*)"$`, `Given a bug with status "resolved"`, s.bugWithStatus)),

		// What must come back: status and envelope.
		d(`^the response status should be (\d+)$`, `Then the response status should be 200`, s.statusIs),
		d(`^the response status should be one of "([^"]*)"$`, `Then the response status should be one of "400, 401, 403"`, s.statusOneOf),
		d(`^the connection should be dropped without an answer$`, `Then the connection should be dropped without an answer`, s.droppedWithoutAnswer),
		d(`^the connection should be (reset|closed|cut in the body) without (?:an|a whole) answer$`, `Then the connection should be reset without an answer`, s.droppedAs),
		d(`^the response should have taken at least (\d+) ms$`, `Then the response should have taken at least 200 ms`, s.tookAtLeast),
		d(`^the response should not be successful$`, `Then the response should not be successful`, s.notSuccessful),
		d(`^the response should be an envelope$`, `Then the response should be an envelope`, s.envelopeAny),
		d(`^the response should be a success envelope$`, `Then the response should be a success envelope`, s.envelopeSuccess),
		d(`^the response should be an error envelope$`, `Then the response should be an error envelope`, s.envelopeError),
		d(`^the error code should be "([^"]*)"$`, `Then the error code should be "INVALID_API_KEY"`, s.errorCode),
		d(`^the response should be JSON$`, `Then the response should be JSON`, s.isJSONResponse),
		d(`^the response body should not contain "([^"]*)"$`, `Then the response body should not contain "{liveKey}"`, s.bodyLacks),
		d(`^the response body should contain "(.*)"$`, `Then the response body should contain "7.50"`, s.bodyContains),

		// What must come back: the body, by path.
		d(`^the JSON at "([^"]*)" should be "([^"]*)"$`, `Then the JSON at "data.status" should be "draft"`, s.jsonIsString),
		d(`^the JSON at "([^"]*)" should equal (true|false|null|-?[0-9][0-9.eE+-]*|".*"|\[.*\]|\{.*\})$`, `Then the JSON at "data.rewardPerBug" should equal 19.99`, s.jsonEquals),
		d(`^the JSON at "([^"]*)" should equal the saved "([^"]*)"$`, `Then the JSON at "data.id" should equal the saved "campaignId"`, s.jsonEqualsSaved),
		d(`^the JSON at "([^"]*)" should not equal the saved "([^"]*)"$`, `Then the JSON at "data.items.0.id" should not equal the saved "firstId"`, s.jsonNotEqualsSaved),
		d(`^the JSON at "([^"]*)" should be an? (string|integer|number|boolean|object|array|null|timestamp)$`, `Then the JSON at "data.testersRequired" should be an integer`, s.jsonIsType),
		d(`^the JSON at "([^"]*)" should be one of "([^"]*)"$`, `Then the JSON at "data.status" should be one of "draft, active"`, s.jsonOneOf),
		d(`^the JSON at "([^"]*)" should start with "([^"]*)"$`, `Then the JSON at "data.id" should start with "cmp_"`, s.jsonStartsWith),
		d(`^the JSON at "([^"]*)" should exist$`, `Then the JSON at "error.details" should exist`, s.jsonExists),
		d(`^the JSON at "([^"]*)" should not exist$`, `Then the JSON at "error" should not exist`, s.jsonNotExists),
		d(`^the JSON at "([^"]*)" should have (\d+) items?$`, `Then the JSON at "data.items" should have 2 items`, s.jsonLen),
		d(`^the JSON at "([^"]*)" should have at least (\d+) items?$`, `Then the JSON at "data.items" should have at least 3 items`, s.jsonMinLen),
		d(`^the JSON at "([^"]*)" should have at most (\d+) items?$`, `Then the JSON at "data.items" should have at most 20 items`, s.jsonMaxLen),
		d(`^the JSON at "([^"]*)" should be a timestamp in UTC with milliseconds$`, `Then the JSON at "data.createdAt" should be a timestamp in UTC with milliseconds`, s.jsonTimestampMillis),
		d(`^every timestamp in the response should be in UTC with milliseconds$`, `Then every timestamp in the response should be in UTC with milliseconds`, s.everyTimestampMillis),
		d(`^the (JSON at|header) "([^"]*)" should be (less than|at most|greater than|at least|equal to|not equal to) (.+)$`, `Then the JSON at "data.updatedAt" should be at least the JSON at "data.createdAt"`, s.compareStep),
		d(`^the JSON at "([^"]*)" should match:$`, "Then the JSON at \"data\" should match:\n  \"\"\"\n  {\"id\": \"<id>\", \"status\": \"draft\", \"createdAt\": \"<timestamp>\"}\n  \"\"\"", s.jsonMatches),
		d(`^the JSON at "([^"]*)" should contain "([^"]*)"$`, `Then the JSON at "data.events" should contain "bug.created"`, s.jsonContains),
		d(`^the JSON at "([^"]*)" should contain:$`, "Then the JSON at \"data.items\" should contain:\n  \"\"\"\n  {\"id\": \"{campaignId}\", \"status\": \"draft\"}\n  \"\"\"", s.jsonContainsDoc),
		d(`^the JSON at "([^"]*)" should not contain "([^"]*)"$`, `Then the JSON at "data.events" should not contain "bug.updated"`, s.jsonLacks),
		d(`^the JSON at "([^"]*)" should not contain:$`, "Then the JSON at \"data.items\" should not contain:\n  \"\"\"\n  {\"name\": \"Lost\"}\n  \"\"\"", s.jsonLacksDoc),
		d(`^the JSON at "([^"]*)" should be empty$`, `Then the JSON at "data.items" should be empty`, s.jsonEmpty),
		d(`^the JSON at "([^"]*)" should not be empty$`, `Then the JSON at "data.items" should not be empty`, s.jsonNotEmpty),
		d(`^exactly (\d+) of the last (\d+) responses should have status (\d+)$`, `Then exactly 1 of the last 9 responses should have status 200`, s.lastStatusesCounted),
		d(`^each of the last (\d+) responses should have status (\d+)$`, `Then each of the last 3 responses should have status 200`, s.lastStatuses),
		d(`^every item at "([^"]*)" should have "([^"]*)" equal to "([^"]*)"$`, `Then every item at "data.items" should have "status" equal to "new"`, s.everyItemHas),
		d(`^the items at "([^"]*)" should include one with "([^"]*)" equal to "([^"]*)"$`, `Then the items at "data.items" should include one with "id" equal to "{campaignId}"`, s.itemsInclude),
		d(`^no item at "([^"]*)" should have "([^"]*)" equal to "([^"]*)"$`, `Then no item at "items" should have "id" equal to "{campaignId}"`, s.noItemHas),
		d(`^the answer should hold a record with id "([^"]*)"$`, `Then the answer should hold a record with id "{campaignId}"`, s.recordListed),
		d(`^the record with id "([^"]*)" in the answer should have "([^"]*)" equal to "([^"]*)"$`, `Then the record with id "{bugId}" in the answer should have "status" equal to "{newStatus}"`, s.recordHas),
		d(`^the record with id "([^"]*)" in the answer should have "([^"]*)" equal to (true|false|null|-?[0-9][0-9.eE+-]*)$`, `Then the record with id "{bugId}" in the answer should have "resolution" equal to null`, s.recordHasLiteral),
		d(`^the items at "([^"]*)" should be ordered by "([^"]*)" (ascending|descending)$`, `Then the items at "data.items" should be ordered by "createdAt" descending`, s.itemsOrdered),

		// Lists walked end to end (their items are then checked at "items").
		d(`^walking "([^"]*)" with limit (\d+) should give every item once, newest first$`, `Then walking "/v1/campaigns" with limit 2 should give every item once, newest first`, s.walkComplete),
		d(`^filtering by "([^"]*)" = "([^"]*)" on "([^"]*)" should give exactly the matching items(?: by "([^"]*)")?$`, `Then filtering by "platform" = "ios" on "/v1/testers" should give exactly the matching items by "platforms"`, s.filterExact),

		// Webhooks, delivered to conform's own receiver.
		d(`^I register (?:a|(\d+)) webhooks? for "([^"]*)"$`, `Given I register a webhook for "campaign.created, bug.created"`, s.registerWebhook),
		d(`^the receiver answers (\d+) to the next (\d+) deliver(?:y|ies)$`, `Given the receiver answers 500 to the next 1 delivery`, s.receiverFails),
		d(`^the receiver drops the next (\d+) deliver(?:y|ies) without an answer$`, `Given the receiver drops the next 1 delivery without an answer`, s.receiverDrops),
		gives(GivesHeld, d(`^the receiver holds its answers until released$`, `Given the receiver holds its answers until released`, s.receiverHolds)),
		needs(GivesHeld, d(`^the receiver releases its held answers$`, `When the receiver releases its held answers`, s.receiverReleases)),
		gives(GivesDelivery, d(`^within (\d+) seconds the receiver should get a "([^"]*)" event$`, `Then within 5 seconds the receiver should get a "campaign.created" event`, s.awaitEvent)),
		needs(GivesDelivery, d(`^within (\d+) seconds the receiver should get the same event again$`, `Then within 10 seconds the receiver should get the same event again`, s.awaitRetry)),
		d(`^the receiver should have got no "([^"]*)" event$`, `Then the receiver should have got no "campaign.created" event`, s.noEvent),
		d(`^the receiver should have got exactly (\d+) "([^"]*)" deliver(?:y|ies)$`, `Then the receiver should have got exactly 1 "campaign.created" delivery`, s.exactDeliveries),
		d(`^no further "([^"]*)" delivery should reach the receiver within (\d+) seconds?$`, `Then no further "campaign.created" delivery should reach the receiver within 2 seconds`, s.noFurtherDelivery),
		needs(GivesDelivery, d(`^the delivery should be signed with the webhook's secret$`, `Then the delivery should be signed with the webhook's secret`, s.deliverySigned)),
		needs(GivesDelivery, d(`^the delivery should be signed with the webhook's secret over a Webhook-Timestamp (\d+) seconds before the event$`, `Then the delivery should be signed with the webhook's secret over a Webhook-Timestamp 600 seconds before the event`, s.deliverySignedStale)),
		needs(GivesDelivery, d(`^the delivery's signature should not verify with the webhook's secret$`, `Then the delivery's signature should not verify with the webhook's secret`, s.deliveryMissigned)),

		// The sandbox's verdict on the client that used the scenario's key.
		sandbox(d(`^the client should have held every client rule$`, `Then the client should have held every client rule`, s.clientHeldEveryRule)),
		sandbox(d(`^the client rule "(CLI-[1-9][0-9]*)" should be (held|broken|not exercised)$`, `Then the client rule "CLI-4" should be broken`, s.clientRuleIs)),

		// What must come back: headers.
		d(`^the header "([^"]*)" should be "([^"]*)"$`, `Then the header "X-RateLimit-Limit" should be "1000"`, s.headerIs),
		d(`^the header "([^"]*)" should contain "([^"]*)"$`, `Then the header "WWW-Authenticate" should contain "Bearer"`, s.headerContains),
		d(`^the header "([^"]*)" should be present$`, `Then the header "Allow" should be present`, s.headerPresent),
		d(`^the header "([^"]*)" should be absent$`, `Then the header "WWW-Authenticate" should be absent`, s.headerAbsent),
		d(`^the header "([^"]*)" should not be "([^"]*)"$`, `Then the header "Webhook-Id" should not be "{firstWebhookId}"`, s.headerIsNot),
		d(`^the header "([^"]*)" should be an integer$`, `Then the header "Retry-After" should be an integer`, s.headerInteger),
		d(`^the (JSON at|header) "([^"]*)" should match the pattern "(.*)"$`, `Then the header "Webhook-Id" should match the pattern "^msg_[0-9a-f]{32}$"`, s.matchesPattern),

		// Browsers (WEB).
		d(`^the answers to the origin "([^"]*)" should let it in wholly or send no Access-Control header$`, `Then the answers to the origin "http://conform.invalid" should let it in wholly or send no Access-Control header`, s.corsWholeOrNone),

		// Rate limits (spec section 8).
		d(`^the rate-limit headers should be present as integers$`, `Then the rate-limit headers should be present as integers`, s.rateHeadersIntegers),
		d(`^X-RateLimit-Remaining should not exceed X-RateLimit-Limit$`, `Then X-RateLimit-Remaining should not exceed X-RateLimit-Limit`, s.remainingWithinLimit),
		d(`^X-RateLimit-Limit should not exceed the published limits$`, `Then X-RateLimit-Limit should not exceed the published limits`, s.limitPublished),
		d(`^X-RateLimit-Reset should be a plausible reset time$`, `Then X-RateLimit-Reset should be a plausible reset time`, s.resetPlausible),
		d(`^X-RateLimit-Reset should be a Unix time in seconds within (\d+) seconds of the server's clock$`, `Then X-RateLimit-Reset should be a Unix time in seconds within 60 seconds of the server's clock`, s.resetUnixWithin),
		d(`^X-RateLimit-Reset should be the end of the server's current UTC minute, hour or day$`, `Then X-RateLimit-Reset should be the end of the server's current UTC minute, hour or day`, s.resetEndsWindow),
		d(`^X-RateLimit-Reset should fall on a whole UTC minute$`, `Then X-RateLimit-Reset should fall on a whole UTC minute`, s.resetOnMinute),
		d(`^X-RateLimit-Remaining should have decreased since the previous response$`, `Then X-RateLimit-Remaining should have decreased since the previous response`, s.remainingDecreased),
		d(`^X-RateLimit-Remaining should be unchanged since the previous response$`, `Then X-RateLimit-Remaining should be unchanged since the previous response`, s.remainingUnchanged),
		d(`^X-RateLimit-Limit should be unchanged since the previous response$`, `Then X-RateLimit-Limit should be unchanged since the previous response`, s.limitUnchanged),
	}, controlDefs(s)...)
}

// Steps documents every step pattern of the library, in catalogue order.
func Steps() []kit.StepDoc {
	defs := stepDefs(nil)
	docs := make([]kit.StepDoc, len(defs))
	for i, d := range defs {
		docs[i] = d.StepDoc
		docs[i].Takes = takes(d.fn)
	}
	return docs
}

// Library is the step catalogue compiled. Compiling once per run matters:
// godog would otherwise compile every pattern again for every scenario.
type Library struct {
	patterns []*regexp.Regexp
	docs     []kit.StepDoc
}

// NewLibrary compiles the catalogue.
func NewLibrary() *Library {
	defs := stepDefs(nil)
	l := &Library{patterns: make([]*regexp.Regexp, len(defs)), docs: make([]kit.StepDoc, len(defs))}
	for i, d := range defs {
		l.patterns[i] = regexp.MustCompile(d.Pattern)
		l.docs[i] = d.StepDoc
		l.docs[i].Takes = takes(d.fn)
	}
	return l
}

// bind registers every step of the library with godog for one scenario,
// as methods of that scenario's own state.
func (l *Library) bind(sc *godog.ScenarioContext, s *scenarioState) {
	for i, d := range stepDefs(s) {
		sc.Step(l.patterns[i], d.fn)
	}
}

// Matches counts the steps of the library that match text: one for a step
// a feature may use, none for an undefined one, more for an ambiguous one.
func (l *Library) Matches(text string) int { return len(l.Matching(text)) }

// Matching returns the steps of the library that match text.
func (l *Library) Matching(text string) []kit.StepDoc {
	var out []kit.StepDoc
	for i, re := range l.patterns {
		if re.MatchString(text) {
			out = append(out, l.docs[i])
		}
	}
	return out
}

// --- who is asking ---

func (s *scenarioState) notAuthenticated(ctx context.Context) error {
	s.auth = authNone
	return nil
}

func (s *scenarioState) useAuthorization(ctx context.Context, value string) error {
	v, err := s.expand(value)
	if err != nil {
		return err
	}
	s.auth, s.rawAuth = authRaw, v
	return nil
}

func (s *scenarioState) useAPIKey(ctx context.Context, key string) error {
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
func (s *scenarioState) freshAccount(ctx context.Context) error {
	if s.t.Profile != kit.ProfileSandbox {
		return fmt.Errorf("%w: a fresh account exists only in the sandbox; tag the scenario @sandbox", kit.ErrUsage)
	}
	s.key = kit.TestPrefix + "conform_" + wire.RandomToken()
	s.t.Model.Own(s.key, true)
	s.fresh = append(s.fresh, s.key)
	s.freshLeft = -1
	s.auth = authConfigured
	return nil
}

func (s *scenarioState) setHeader(ctx context.Context, name, value string) error {
	// A name is expanded too: a header's name is one more place a
	// deployment may echo a key from (SHR-12).
	n, err := s.expand(name)
	if err != nil {
		return err
	}
	v, err := s.expand(value)
	if err != nil {
		return err
	}
	s.headers.Set(n, v)
	return nil
}

// --- what is sent ---

func (s *scenarioState) sendPlain(ctx context.Context, method, path string) error {
	return s.sendBody(ctx, method, path, nil, "")
}

func (s *scenarioState) sendJSONDoc(ctx context.Context, method, path string, doc *godog.DocString) error {
	return s.sendBody(ctx, method, path, []byte(doc.Content), "application/json")
}

func (s *scenarioState) sendInline(ctx context.Context, method, path, body string) error {
	if body == "" {
		return s.sendBody(ctx, method, path, nil, "")
	}
	return s.sendBody(ctx, method, path, []byte(body), "application/json")
}

func (s *scenarioState) sendTyped(ctx context.Context, method, path, contentType string, doc *godog.DocString) error {
	return s.sendBody(ctx, method, path, []byte(doc.Content), contentType)
}

// sendLarge sends a syntactically valid JSON object of the given size, so that
// only its size can be the reason for a refusal.
func (s *scenarioState) sendLarge(ctx context.Context, method, path string, size int) error {
	const head, tail = `{"name": "`, `"}`
	n := size - len(head) - len(tail)
	if n < 0 {
		n = 0
	}
	body := head + strings.Repeat("a", n) + tail
	return s.sendBody(ctx, method, path, []byte(body), "application/json")
}

// sendPadded sends a request whose target, path and query, is exactly
// size bytes, the padding appended to the target as written: so that only
// the target's length can be the reason for a refusal.
func (s *scenarioState) sendPadded(ctx context.Context, method, path, pad string, size int) error {
	p, err := s.expandTarget(path)
	if err != nil {
		return err
	}
	n := size - len(p)
	if n < 0 {
		return fmt.Errorf("%w: %q is already longer than %d bytes", kit.ErrUsage, p, size)
	}
	_, err = s.send(ctx, method, p+strings.Repeat(pad, n), nil, "")
	return err
}

func (s *scenarioState) sendBody(ctx context.Context, method, path string, body []byte, contentType string) error {
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

// errGaveUp is the cause of a request's context that sendGivingUp ended.
var errGaveUp = errors.New("the client gave up waiting")

// sendGivingUp sends a request as a client with a timeout does: one that
// stops waiting after ms and closes its connection. The step fails if the
// answer, or a dropped connection, came first, since then nobody gave up.
func (s *scenarioState) sendGivingUp(ctx context.Context, method, path string, ms int) error {
	return s.giveUp(ctx, method, path, nil, "", ms)
}

// sendBodyGivingUp is sendGivingUp with a JSON body, for a request that
// must be one the API carries out, such as a write.
func (s *scenarioState) sendBodyGivingUp(ctx context.Context, method, path, body string, ms int) error {
	b, err := s.expand(body)
	if err != nil {
		return err
	}
	return s.giveUp(ctx, method, path, []byte(b), "application/json", ms)
}

func (s *scenarioState) giveUp(ctx context.Context, method, path string, body []byte, contentType string, ms int) error {
	p, err := s.expandTarget(path)
	if err != nil {
		return err
	}
	giveUp, cancel := context.WithTimeoutCause(ctx, time.Duration(ms)*time.Millisecond, errGaveUp)
	defer cancel()
	ex, err := s.send(giveUp, method, p, body, contentType)
	switch {
	case err != nil:
		return err
	case ex.GaveUp:
		return nil
	case ex.NoAnswer != "":
		return fmt.Errorf("%s %s: the connection was dropped (%s) before the client gave up after %d ms", method, s.redact(p), ex.NoAnswer, ms)
	default:
		return fmt.Errorf("%s %s was answered (%d) within %d ms; want the client to give up first", method, s.redact(p), ex.Status, ms)
	}
}

// maxAtOnce bounds the requests one step sends together.
const maxAtOnce = 64

// sendAtOnceGivingUp sends n requests together, each on a connection of
// its own and given up after ms as sendGivingUp gives one up, and keeps
// them in the history in the order they were sent: for a bound on what
// one key may hold waiting at a time, which requests one after another
// never reach.
func (s *scenarioState) sendAtOnceGivingUp(ctx context.Context, n int, method, path string, ms int) error {
	if n < 1 || n > maxAtOnce {
		return fmt.Errorf("%w: send from 1 to %d requests at once, not %d", kit.ErrUsage, maxAtOnce, n)
	}
	p, err := s.expandTarget(path)
	if err != nil {
		return err
	}
	r := s.request(method, p, nil, "")
	if s.auth == authConfigured && s.key != s.t.Key && s.freshLeft >= 0 && s.freshLeft < n && !s.sink.Unbudgeted && !s.spends {
		s.skip = fmt.Sprintf("a fresh account's rate limit is %d a window, too small for this scenario", s.freshLimit)
		return godog.ErrSkip
	}
	type sent struct {
		ex     *wire.Exchange
		err    error
		gaveUp bool
	}
	results := make([]sent, n)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			giveUp, cancel := context.WithTimeoutCause(ctx, time.Duration(ms)*time.Millisecond, errGaveUp)
			defer cancel()
			ex, err := s.t.Send(giveUp, r)
			results[i] = sent{ex, err, err != nil && ex != nil && errors.Is(context.Cause(giveUp), errGaveUp)}
		}()
	}
	wg.Wait()
	// Redaction reads the scenario's history, whose exchanges decode their
	// JSON on first read, so it waits until the sends are done.
	for i, res := range results {
		if res.gaveUp {
			ex := res.ex
			results[i] = sent{ex: &wire.Exchange{Method: ex.Method, URL: ex.URL, ReqHeader: ex.ReqHeader, Sent: ex.Sent, Elapsed: ex.Elapsed, NoAnswer: s.redact(res.err.Error()), GaveUp: true}}
		}
	}
	slices.SortStableFunc(results, func(a, b sent) int {
		if a.ex == nil || b.ex == nil {
			return 0
		}
		return a.ex.Sent.Compare(b.ex.Sent)
	})
	for _, res := range results {
		switch {
		case errors.Is(res.err, transport.ErrThrottled):
			return res.err
		case res.ex == nil:
			return fmt.Errorf("building %s %s: %w", method, p, res.err)
		case res.err != nil:
			return fmt.Errorf("%w: %s %s: %s", kit.ErrConnection, method, s.redact(res.ex.URL), s.redact(res.err.Error()))
		}
		s.record(res.ex)
	}
	return nil
}

func (s *scenarioState) sendMany(ctx context.Context, n int, method, path string) error {
	for i := 0; i < n; i++ {
		if err := s.sendPlain(ctx, method, path); err != nil {
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
func (s *scenarioState) exhaust(ctx context.Context, method, path string) error {
	p, err := s.expandTarget(path)
	if err != nil {
		return err
	}
	s.spends = true
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

func (s *scenarioState) saveJSON(ctx context.Context, path, name string) error {
	v, err := valueAt(s, path)
	if err != nil {
		return err
	}
	s.saved[name] = v
	return nil
}

// saveText fixes a value, typically one with {random}, so that later steps
// can refer to the same value.
// saveRepeated saves a character repeated, for a value whose size alone
// is what a step tests, such as a body at a bound in bytes.
func (s *scenarioState) saveRepeated(_ context.Context, char string, n int, name string) error {
	s.saved[name] = strings.Repeat(char, n)
	return nil
}

func (s *scenarioState) saveText(ctx context.Context, text, name string) error {
	v, err := s.expand(text)
	if err != nil {
		return err
	}
	s.saved[name] = v
	return nil
}
