package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// Steps that check the status, the envelope and the body of the last response.

func (s *scenarioState) lastExchange(ctx context.Context) (*wire.Exchange, error) {
	return s.response()
}

// lastJSON is the body of the last response, decoded.
func (s *scenarioState) lastJSON(ctx context.Context) (any, error) {
	e, err := s.lastExchange(ctx)
	if err != nil {
		return nil, err
	}
	return e.JSON()
}

func (s *scenarioState) statusIs(ctx context.Context, want int) error {
	e, err := s.lastExchange(ctx)
	if err != nil {
		return err
	}
	if e.Status != want {
		return fmt.Errorf("want HTTP status %d, got %d", want, e.Status)
	}
	return nil
}

func (s *scenarioState) statusOneOf(ctx context.Context, list string) error {
	e, err := s.lastExchange(ctx)
	if err != nil {
		return err
	}
	var wants []string
	for _, w := range strings.Split(list, ",") {
		w = strings.TrimSpace(w)
		if w == strconv.Itoa(e.Status) {
			return nil
		}
		wants = append(wants, w)
	}
	return fmt.Errorf("want HTTP status one of %s, got %d", strings.Join(wants, ", "), e.Status)
}

func (s *scenarioState) notSuccessful(ctx context.Context) error {
	e, err := s.lastExchange(ctx)
	if err != nil {
		return err
	}
	if e.Status >= 200 && e.Status < 300 {
		return fmt.Errorf("want a refusal (a non-2xx status), got HTTP %d", e.Status)
	}
	if v, err := e.JSON(); err == nil {
		if m, ok := v.(map[string]any); ok && m["success"] == true {
			return fmt.Errorf("want a refusal, got \"success\": true with HTTP %d", e.Status)
		}
	}
	return nil
}

func (s *scenarioState) envelopeAny(ctx context.Context) error {
	return s.envelopeStep(ctx, rules.EnvelopeEither)
}

func (s *scenarioState) envelopeSuccess(ctx context.Context) error {
	return s.envelopeStep(ctx, rules.EnvelopeOK)
}

func (s *scenarioState) envelopeError(ctx context.Context) error {
	return s.envelopeStep(ctx, rules.EnvelopeFailed)
}

func (s *scenarioState) envelopeStep(ctx context.Context, kind rules.EnvelopeKind) error {
	e, err := s.lastExchange(ctx)
	if err != nil {
		return err
	}
	return rules.CheckEnvelope(e, kind)
}

func (s *scenarioState) errorCode(ctx context.Context, code string) error {
	v, err := s.lastJSON(ctx)
	if err != nil {
		return err
	}
	got, err := wire.Lookup(v, "error.code")
	if err != nil {
		return fmt.Errorf("want error code %q: %w", code, err)
	}
	if got != code {
		return fmt.Errorf("want error code %q, got %s", code, wire.Describe(got))
	}
	return nil
}

func (s *scenarioState) isJSONResponse(ctx context.Context) error {
	e, err := s.lastExchange(ctx)
	if err != nil {
		return err
	}
	return rules.CheckJSONContentType(e)
}

func (s *scenarioState) bodyLacks(ctx context.Context, text string) error {
	t, err := s.expand(text)
	if err != nil {
		return err
	}
	e, err := s.response()
	if err != nil {
		return err
	}
	if t != "" && strings.Contains(string(e.Body), t) {
		return fmt.Errorf("the body contains %q; want it nowhere in the response", s.t.Redact(t))
	}
	return nil
}

// --- body by path ---

func valueAt(s *scenarioState, path string) (any, error) {
	e, err := s.response()
	if err != nil {
		return nil, err
	}
	root, err := e.JSON()
	if err != nil {
		return nil, err
	}
	return wire.Lookup(root, path)
}

func (s *scenarioState) jsonAt(ctx context.Context, path string) (any, error) {
	return valueAt(s, path)
}

func (s *scenarioState) jsonIsString(ctx context.Context, path, want string) error {
	w, err := s.expand(want)
	if err != nil {
		return err
	}
	got, err := valueAt(s, path)
	if err != nil {
		return err
	}
	switch {
	case got == nil && w == "null":
		return fmt.Errorf("the JSON at %q is null, not the text \"null\": to match JSON null, write `the JSON at %q should equal null`", path, path)
	case got != w:
		return fmt.Errorf("the JSON at %q: want string %q, got %s", path, w, wire.Describe(got))
	}
	return nil
}

func (s *scenarioState) jsonEquals(ctx context.Context, path, literal string) error {
	want, err := wire.ParseLiteral(literal)
	if err != nil {
		return err
	}
	return s.compareAt(ctx, path, want)
}

func (s *scenarioState) jsonEqualsSaved(ctx context.Context, path, name string) error {
	want, ok := s.saved[name]
	if !ok {
		return fmt.Errorf("nothing saved as %q (known: %s)", name, s.savedNames())
	}
	return s.compareAt(ctx, path, want)
}

func (s *scenarioState) jsonNotEqualsSaved(ctx context.Context, path, name string) error {
	other, ok := s.saved[name]
	if !ok {
		return fmt.Errorf("nothing saved as %q (known: %s)", name, s.savedNames())
	}
	got, err := s.jsonAt(ctx, path)
	if err != nil {
		return err
	}
	if wire.MatchDiff(other, got) == "" {
		return fmt.Errorf("the JSON at %q: want anything but the saved %q, got %s", path, name, wire.Describe(got))
	}
	return nil
}

func (s *scenarioState) compareAt(ctx context.Context, path string, want any) error {
	got, err := s.jsonAt(ctx, path)
	if err != nil {
		return err
	}
	if d := wire.MatchDiff(want, got); d != "" {
		return fmt.Errorf("the JSON at %q differs (-want +got):\n%s", path, d)
	}
	return nil
}

func (s *scenarioState) jsonIsType(ctx context.Context, path, typ string) error {
	got, err := s.jsonAt(ctx, path)
	if err != nil {
		return err
	}
	if !wire.IsType(got, typ) {
		return fmt.Errorf("the JSON at %q: want %s, got %s", path, article(typ), wire.Describe(got))
	}
	return nil
}

func article(typ string) string {
	if strings.ContainsAny(typ[:1], "aeiou") {
		return "an " + typ
	}
	return "a " + typ
}

func (s *scenarioState) jsonOneOf(ctx context.Context, path, list string) error {
	got, err := s.jsonAt(ctx, path)
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
	return fmt.Errorf("the JSON at %q: want one of %s, got %s", path, strings.Join(wants, ", "), wire.Describe(got))
}

func (s *scenarioState) jsonStartsWith(ctx context.Context, path, prefix string) error {
	got, err := s.jsonAt(ctx, path)
	if err != nil {
		return err
	}
	if s, ok := got.(string); !ok || !strings.HasPrefix(s, prefix) {
		return fmt.Errorf("the JSON at %q: want a string starting with %q, got %s", path, prefix, wire.Describe(got))
	}
	return nil
}

func (s *scenarioState) jsonExists(ctx context.Context, path string) error {
	_, err := s.jsonAt(ctx, path)
	return err
}

func (s *scenarioState) jsonNotExists(ctx context.Context, path string) error {
	e, err := s.response()
	if err != nil {
		return err
	}
	root, err := e.JSON()
	if err != nil {
		return err
	}
	if v, err := wire.Lookup(root, path); err == nil {
		return fmt.Errorf("the JSON at %q: want nothing there, got %s", path, wire.Describe(v))
	}
	return nil
}

func (s *scenarioState) arrayAt(ctx context.Context, path string) ([]any, error) {
	got, err := s.jsonAt(ctx, path)
	if err != nil {
		return nil, err
	}
	a, ok := got.([]any)
	if !ok {
		return nil, fmt.Errorf("the JSON at %q: want an array, got %s", path, wire.Describe(got))
	}
	return a, nil
}

func (s *scenarioState) jsonLen(ctx context.Context, path string, n int) error {
	a, err := s.arrayAt(ctx, path)
	if err != nil {
		return err
	}
	if len(a) != n {
		return fmt.Errorf("the JSON at %q: want %d item(s), got %d", path, n, len(a))
	}
	return nil
}

func (s *scenarioState) jsonMinLen(ctx context.Context, path string, n int) error {
	a, err := s.arrayAt(ctx, path)
	if err != nil {
		return err
	}
	if len(a) < n {
		return fmt.Errorf("the JSON at %q: want at least %d item(s), got %d", path, n, len(a))
	}
	return nil
}

func (s *scenarioState) jsonMatches(ctx context.Context, path string, doc *godog.DocString) error {
	text, err := s.expand(doc.Content)
	if err != nil {
		return err
	}
	want, err := wire.DecodeJSON([]byte(text))
	if err != nil {
		return fmt.Errorf("the expected document is not JSON: %w", err)
	}
	return s.compareAt(ctx, path, want)
}

func (s *scenarioState) everyItemHas(ctx context.Context, path, field, want string) error {
	w, err := s.expand(want)
	if err != nil {
		return err
	}
	items, err := s.arrayAt(ctx, path)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return fmt.Errorf("every item at %q: the list is empty, so nothing shows %q = %q", path, field, w)
	}
	for i, it := range items {
		got, err := wire.Lookup(it, field)
		if err != nil || !valueIs(got, w) {
			return fmt.Errorf("item %d at %q: want %q = %s, got %s", i, path, field, w, describeLookup(got, err))
		}
	}
	return nil
}

// valueIs tells whether a JSON value is what a step wrote as text: a string
// equal to it, a number of that value, a boolean or null so spelt. Steps
// quote every value, so "1" must find the integer 1 and "true" the boolean.
func valueIs(got any, want string) bool {
	switch g := got.(type) {
	case string:
		return g == want
	case json.Number:
		return wire.NumbersEqual(g, json.Number(strings.TrimSpace(want)))
	case bool:
		return strconv.FormatBool(g) == want
	case nil:
		return want == "null"
	}
	return false
}

func (s *scenarioState) noItemHas(ctx context.Context, path, field, want string) error {
	i, w, _, err := s.itemWith(ctx, path, field, want)
	if err == nil && i >= 0 {
		return fmt.Errorf("item %d at %q has %q = %q; want no such item", i, path, field, w)
	}
	return err
}

// itemWith returns the index of the first item at path whose field equals
// want, placeholders expanded (-1 if none), the expanded value and how many
// items there are.
func (s *scenarioState) itemWith(ctx context.Context, path, field, want string) (int, string, int, error) {
	w, err := s.expand(want)
	if err != nil {
		return -1, "", 0, err
	}
	items, err := s.arrayAt(ctx, path)
	if err != nil {
		return -1, w, 0, err
	}
	for i, it := range items {
		if got, err := wire.Lookup(it, field); err == nil && valueIs(got, w) {
			return i, w, len(items), nil
		}
	}
	return -1, w, len(items), nil
}

func (s *scenarioState) jsonMaxLen(ctx context.Context, path string, n int) error {
	a, err := s.arrayAt(ctx, path)
	if err != nil {
		return err
	}
	if len(a) > n {
		return fmt.Errorf("the JSON at %q: want at most %d item(s), got %d", path, n, len(a))
	}
	return nil
}

func (s *scenarioState) bodyContains(ctx context.Context, text string) error {
	t, err := s.expand(text)
	if err != nil {
		return err
	}
	e, err := s.response()
	if err != nil {
		return err
	}
	if !strings.Contains(string(e.Body), t) {
		return fmt.Errorf("the body does not contain %q", s.redact(t))
	}
	return nil
}

// jsonTimestampMillis is ENV-11's form of every timestamp: RFC 3339 in UTC
// with exactly three fractional digits.
func (s *scenarioState) jsonTimestampMillis(ctx context.Context, path string) error {
	got, err := s.jsonAt(ctx, path)
	if err != nil {
		return err
	}
	return rules.CheckMillisTimestamp(path, got)
}

// everyTimestampMillis checks every field named createdAt, updatedAt or
// otherwise ending in "At" anywhere in the body, and fails if there is none.
func (s *scenarioState) everyTimestampMillis(ctx context.Context) error {
	v, err := s.lastJSON(ctx)
	if err != nil {
		return err
	}
	if n := rules.CountTimestamps(v); n == 0 {
		return errors.New("timestamp rule: the body holds no field ending in \"At\" to check")
	}
	return rules.CheckTimestamps(v)
}

func (s *scenarioState) itemsInclude(ctx context.Context, path, field, want string) error {
	i, w, n, err := s.itemWith(ctx, path, field, want)
	if err == nil && i < 0 {
		return fmt.Errorf("none of the %d item(s) at %q has %q = %q", n, path, field, w)
	}
	return err
}

func (s *scenarioState) itemsOrdered(ctx context.Context, path, field, direction string) error {
	items, err := s.arrayAt(ctx, path)
	if err != nil {
		return err
	}
	return checkOrder(items, path, field, direction == "descending")
}

// checkOrder checks that items are ordered by field, equal neighbours
// allowed. Timestamps compare as instants and numbers as numbers; a value
// that is neither, or of another kind than its neighbour, fails: an order
// that cannot be checked is not an order.
func checkOrder(items []any, path, field string, descending bool) error {
	dir := "ascending"
	if descending {
		dir = "descending (newest first)"
	}
	for i := 1; i < len(items); i++ {
		a, errA := wire.Lookup(items[i-1], field)
		b, errB := wire.Lookup(items[i], field)
		if errA != nil || errB != nil {
			return fmt.Errorf("items at %q: %q missing in item %d or %d", path, field, i-1, i)
		}
		c, err := compareValues(a, b)
		if err != nil {
			return fmt.Errorf("items at %q: cannot order item %d and %d by %q: %w", path, i-1, i, field, err)
		}
		if (descending && c < 0) || (!descending && c > 0) {
			return fmt.Errorf("items at %q are not ordered by %s %s: item %d has %s before item %d with %s", path, field, dir, i-1, wire.Describe(a), i, wire.Describe(b))
		}
	}
	return nil
}

// compareValues orders two JSON values of the same kind: timestamps as
// instants, numbers by value.
func compareValues(a, b any) (int, error) {
	if x, ok := a.(json.Number); ok {
		y, ok := b.(json.Number)
		if !ok {
			return 0, fmt.Errorf("%s and %s are not both numbers", wire.Describe(a), wire.Describe(b))
		}
		rx, okx := new(big.Rat).SetString(string(x))
		ry, oky := new(big.Rat).SetString(string(y))
		if !okx || !oky {
			return 0, fmt.Errorf("%s or %s is not a number", x, y)
		}
		return rx.Cmp(ry), nil
	}
	x, okx := a.(string)
	y, oky := b.(string)
	if okx && oky {
		tx, errx := wire.ParseTimestamp(x)
		ty, erry := wire.ParseTimestamp(y)
		if errx == nil && erry == nil {
			return tx.Compare(ty), nil
		}
	}
	return 0, fmt.Errorf("%s and %s are neither both timestamps nor both numbers", wire.Describe(a), wire.Describe(b))
}

func describeLookup(v any, err error) string {
	if err != nil {
		return err.Error()
	}
	return wire.Describe(v)
}

// jsonContains holds when the string at path contains the text, or the
// array there has an item equal to it (text, number, boolean or null).
func (s *scenarioState) jsonContains(ctx context.Context, path, want string) error {
	w, err := s.expand(want)
	if err != nil {
		return err
	}
	got, err := valueAt(s, path)
	if err != nil {
		return err
	}
	switch g := got.(type) {
	case string:
		if strings.Contains(g, w) {
			return nil
		}
	case []any:
		for _, it := range g {
			if valueIs(it, w) {
				return nil
			}
		}
	default:
		return fmt.Errorf("the JSON at %q: want a string or an array to look in, got %s", path, wire.Describe(got))
	}
	return fmt.Errorf("the JSON at %q does not contain %q: got %s", path, w, wire.Truncate(wire.Describe(got), 300))
}

// jsonContainsDoc holds when some item of the array at path matches the
// document as "should match:" matches: every listed key, placeholders
// allowed.
func (s *scenarioState) jsonContainsDoc(ctx context.Context, path string, doc *godog.DocString) error {
	want, items, err := s.docAndItems(ctx, path, doc)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(items, matchedBy(want)) {
		return nil
	}
	return fmt.Errorf("none of the %d item(s) at %q matches:\n%s", len(items), path, strings.Join(wire.JSONLines(want), "\n"))
}

// docAndItems reads the JSON item a step's document describes, and the
// array at path to look for it in.
func (s *scenarioState) docAndItems(ctx context.Context, path string, doc *godog.DocString) (any, []any, error) {
	text, err := s.expand(doc.Content)
	if err != nil {
		return nil, nil, err
	}
	item, err := wire.DecodeJSON([]byte(text))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: the item is not JSON: %w", kit.ErrUsage, err)
	}
	items, err := s.arrayAt(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	return item, items, nil
}

// matchedBy says whether an item matches doc as "should match:" matches.
func matchedBy(doc any) func(item any) bool {
	return func(item any) bool { return wire.MatchDiff(doc, item) == "" }
}

// jsonLacks is jsonContains turned round: the string at path does not
// hold the text, or no item of the array at path is it.
func (s *scenarioState) jsonLacks(ctx context.Context, path, unwanted string) error {
	w, err := s.expand(unwanted)
	if err != nil {
		return err
	}
	got, err := valueAt(s, path)
	if err != nil {
		return err
	}
	switch g := got.(type) {
	case string:
		if !strings.Contains(g, w) {
			return nil
		}
	case []any:
		i := slices.IndexFunc(g, func(it any) bool { return valueIs(it, w) })
		if i < 0 {
			return nil
		}
		return fmt.Errorf("the JSON at \"%s.%d\" is %q, which the JSON at %q should not contain", path, i, w, path)
	default:
		return fmt.Errorf("the JSON at %q: want a string or an array to look in, got %s", path, wire.Describe(got))
	}
	return fmt.Errorf("the JSON at %q contains %q: got %s", path, w, wire.Truncate(wire.Describe(got), 300))
}

// jsonLacksDoc holds when no item of the array at path matches the
// document as "should match:" matches.
func (s *scenarioState) jsonLacksDoc(ctx context.Context, path string, doc *godog.DocString) error {
	unwanted, items, err := s.docAndItems(ctx, path, doc)
	if err != nil {
		return err
	}
	if i := slices.IndexFunc(items, matchedBy(unwanted)); i >= 0 {
		return fmt.Errorf("the item at \"%s.%d\" matches what should not be there: %s", path, i, wire.Truncate(wire.Describe(items[i]), 300))
	}
	return nil
}

// jsonEmpty holds for an empty array, object or string.
func (s *scenarioState) jsonEmpty(ctx context.Context, path string) error {
	got, err := s.jsonAt(ctx, path)
	if err != nil {
		return err
	}
	if n, ok := sizeOf(got); !ok || n != 0 {
		return fmt.Errorf("the JSON at %q: want it empty, got %s", path, wire.Truncate(wire.Describe(got), 300))
	}
	return nil
}

func (s *scenarioState) jsonNotEmpty(ctx context.Context, path string) error {
	got, err := s.jsonAt(ctx, path)
	if err != nil {
		return err
	}
	if n, ok := sizeOf(got); !ok || n == 0 {
		return fmt.Errorf("the JSON at %q: want a non-empty array, object or string, got %s", path, wire.Describe(got))
	}
	return nil
}

func sizeOf(v any) (int, bool) {
	switch x := v.(type) {
	case []any:
		return len(x), true
	case map[string]any:
		return len(x), true
	case string:
		return len(x), true
	}
	return 0, false
}

// lastStatuses holds when each of the last n responses has the status,
// after "I send N … requests".
func (s *scenarioState) lastStatuses(ctx context.Context, n, want int) error {
	if n < 1 || len(s.history) < n {
		return fmt.Errorf("%w: the step checks the last %d responses, but the scenario has %d", kit.ErrUsage, n, len(s.history))
	}
	for i, e := range s.history[len(s.history)-n:] {
		if e.Status != want {
			return fmt.Errorf("response %d of the last %d (%s %s): want HTTP status %d, got %d", i+1, n, e.Method, e.URL, want, e.Status)
		}
	}
	return nil
}

// lastStatusesCounted holds when exactly count of the last n responses
// have the status: of requests sent at once, which come back in no
// promised order.
func (s *scenarioState) lastStatusesCounted(ctx context.Context, count, n, want int) error {
	if n < 1 || len(s.history) < n {
		return fmt.Errorf("%w: the step checks the last %d responses, but the scenario has %d", kit.ErrUsage, n, len(s.history))
	}
	var got []string
	matched := 0
	for _, e := range s.history[len(s.history)-n:] {
		if e.Status == want {
			matched++
		}
		if e.NoAnswer != "" {
			got = append(got, "no answer")
		} else {
			got = append(got, strconv.Itoa(e.Status))
		}
	}
	if matched != count {
		return fmt.Errorf("%d of the last %d responses have HTTP status %d, want exactly %d (got %s)", matched, n, want, count, strings.Join(got, ", "))
	}
	return nil
}

// droppedWithoutAnswer holds when the last request's connection ended
// before an answer came, as a planned reset, close or truncate ends it.
func (s *scenarioState) droppedWithoutAnswer(ctx context.Context) error {
	e, err := s.lastSent()
	if err != nil {
		return err
	}
	if e.NoAnswer == "" {
		return fmt.Errorf("%s %s was answered (%d); want the connection dropped without an answer", e.Method, s.redact(pathOf(e.URL)), e.Status)
	}
	if e.GaveUp {
		return fmt.Errorf("%s %s: the client gave up waiting; want the connection dropped by the deployment", e.Method, s.redact(pathOf(e.URL)))
	}
	return nil
}

// droppedAs holds when the last request's connection ended as a planned
// network fault of one kind ends it: a TCP reset, an orderly close before
// any answer, or a close part way through a body whose headers came.
func (s *scenarioState) droppedAs(ctx context.Context, how string) error {
	if err := s.droppedWithoutAnswer(ctx); err != nil {
		return err
	}
	e, _ := s.lastSent()
	if got := dropKind(e.NoAnswer); got != how {
		return fmt.Errorf("%s %s: want the connection %s, got it %s (%s)", e.Method, s.redact(pathOf(e.URL)), how, got, e.NoAnswer)
	}
	return nil
}

// dropKind names how a connection ended without a whole answer, from the
// error the client met: net/http reports a close before the status line as
// EOF and one inside a body whose length the headers gave as an unexpected
// EOF.
func dropKind(noAnswer string) string {
	switch {
	case strings.Contains(noAnswer, "connection reset"):
		return "reset"
	case strings.Contains(noAnswer, "unexpected EOF"):
		return "cut in the body"
	default:
		return "closed"
	}
}

// tookAtLeast holds when the last answer, or the drop that ended it, came
// at least ms milliseconds after its request was sent, as a planned delay
// or trickle makes it.
func (s *scenarioState) tookAtLeast(ctx context.Context, ms int) error {
	e, err := s.lastSent()
	if err != nil {
		return err
	}
	if s.readsDelivery() {
		return fmt.Errorf("%w: the last thing received is a webhook delivery, which has no response time; send a request first", kit.ErrUsage)
	}
	if want := time.Duration(ms) * time.Millisecond; e.Elapsed < want {
		return fmt.Errorf("%s %s took %s; want at least %s", e.Method, s.redact(pathOf(e.URL)), e.Elapsed.Round(time.Millisecond), want)
	}
	return nil
}
