package sandbox

import (
	"encoding/json"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Bounds of the sandbox controls.
const (
	MaxFaultCount = 1000
	MaxFaultDelay = 30 * time.Second
	// MaxFaults is how many faults one account may have planned at once.
	MaxFaults = 32
	// MaxFaultRetryAfter bounds the Retry-After seconds of an injected answer.
	MaxFaultRetryAfter = 3600
	// MaxFaultHeaders, MaxFaultHeaderName and MaxFaultHeaderBytes bound
	// the extra headers of an injected answer, their names and their
	// values; MaxFaultBody bounds its raw body.
	MaxFaultHeaders     = 16
	MaxFaultHeaderName  = 128
	MaxFaultHeaderBytes = 1 << 10
	MaxFaultBody        = 16 << 10
	// MaxFaultPlanBytes bounds what one account's planned faults hold in
	// all, as FaultSpec.Bytes counts them: as much as its request journal,
	// so that a key's plan costs what its journal does, whatever the fields.
	MaxFaultPlanBytes = 64 << 10
	// MaxFaultSeed is the largest seed a JavaScript number holds exactly.
	MaxFaultSeed = 1<<53 - 1
	// MaxPathPattern bounds a fault's or a journal filter's path pattern.
	MaxPathPattern = 256
	MaxClockMove   = 366 * 24 * time.Hour
)

// DefaultTrickle is how long a trickled body takes when the fault does not say.
const DefaultTrickle = time.Second

// ErrInjectedFailure is the code of an injected status that no sandbox error
// has as its own (403, 502, 503…) or that several share (400, 409).
const ErrInjectedFailure = "INJECTED_FAILURE"

// Network failures a fault can inject instead of an answer.
const (
	// NetworkReset resets the connection (TCP RST) without an answer.
	NetworkReset = "reset"
	// NetworkClose closes the connection without an answer.
	NetworkClose = "close"
	// NetworkTruncate sends the real answer's headers and only half of the
	// body its Content-Length promises, then closes the connection.
	NetworkTruncate = "truncate"
	// NetworkMalformed answers 200 with a JSON content type and a body that
	// is not JSON.
	NetworkMalformed = "malformed"
	// NetworkTrickle sends the real answer's body a little at a time.
	NetworkTrickle = "trickle"
)

// NetworkFaults lists the network failures, in the order the docs give them.
var NetworkFaults = []string{NetworkReset, NetworkClose, NetworkTruncate, NetworkMalformed, NetworkTrickle}

// When a request fault acts, beside the API carrying the request out.
const (
	// PhaseBefore, the default, acts before the API sees the request: a
	// status, reset, close or malformed answers in its place, and nothing
	// is carried out; a delay holds the request back, and a client that
	// gives up meanwhile leaves it not carried out.
	PhaseBefore = "before"
	// PhaseAfter lets the API carry the request out first, and then
	// delays, replaces or drops its answer: a write a client never hears of.
	PhaseAfter = "after"
)

// FaultPhases lists the phases a request fault may name.
var FaultPhases = []string{PhaseBefore, PhaseAfter}

// What a webhook fault does to the first attempt of a delivery it hits.
const (
	// WebhookDuplicate sends the delivery a second time, with the same
	// Webhook-Id, once the first attempt has been answered.
	WebhookDuplicate = "duplicate"
	// WebhookReorder holds the delivery back until the next event to the
	// same webhook has been attempted, and sends it then.
	WebhookReorder = "reorder"
	// WebhookBadSignature signs the delivery with a key other than the
	// webhook's secret.
	WebhookBadSignature = "badSignature"
	// WebhookStaleTimestamp sends a Webhook-Timestamp StaleTimestampAge in
	// the past, and signs over it.
	WebhookStaleTimestamp = "staleTimestamp"
)

// WebhookFaults lists what a webhook fault can do, in the order the docs
// give them.
var WebhookFaults = []string{WebhookDuplicate, WebhookReorder, WebhookBadSignature, WebhookStaleTimestamp}

// StaleTimestampAge is how far in the past a staleTimestamp fault puts
// Webhook-Timestamp: past the five minutes receivers commonly accept.
const StaleTimestampAge = 10 * time.Minute

// FaultMethods are the methods a fault or a journal filter can name.
var FaultMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}

// FaultSpec is a fault as POST /_sandbox/faults asks for it: which API
// requests, or with Event which webhook deliveries, it hits, how many of
// them, and what it does to them.
type FaultSpec struct {
	// Event, if set, makes the fault a webhook fault that hits deliveries
	// of events of this type, or of any type when it is EventAny; it then
	// hits no request.
	Event string `json:"event,omitempty"`
	// Webhook, if set, is one of WebhookFaults.
	Webhook string `json:"webhook,omitempty"`
	// Method, if set, limits the fault to requests with this method.
	Method string `json:"method,omitempty"`
	// Path, if set, limits the fault to this path, or to the paths it
	// starts when it ends in "*".
	Path string `json:"path,omitempty"`
	// Count is how many requests it hits; 0 means until cleared, which only
	// a fault with a rate may ask for.
	Count int `json:"-"`
	// Rate is the share of matching requests it hits, drawn from Seed.
	Rate float64 `json:"rate"`
	Seed uint64  `json:"seed"`
	// Status, if set, is answered instead of the API's answer.
	Status int `json:"status,omitempty"`
	// RetryAfter is the Retry-After of an injected answer as planned: a
	// number of seconds, an HTTP-date string, or null for none.
	RetryAfter json.RawMessage `json:"retryAfter,omitempty"`
	// RetryAfterHeader is the Retry-After header RetryAfter stands for;
	// empty for none.
	RetryAfterHeader string `json:"-"`
	// Headers are extra headers of an injected answer; they replace any the
	// sandbox would have set.
	Headers map[string]string `json:"headers,omitempty"`
	// Body, if set, is sent as it is instead of the error envelope.
	Body    *string `json:"body,omitempty"`
	DelayMS int64   `json:"delayMs"`
	// Network, if set, is one of NetworkFaults.
	Network string `json:"network,omitempty"`
	// TrickleMS is how long a trickled body takes.
	TrickleMS int64 `json:"trickleMs,omitempty"`
	// Phase is PhaseAfter, or empty for PhaseBefore, which is how a fault
	// planned with "before" is kept and listed.
	Phase string `json:"phase,omitempty"`
}

// CarriesOut reports whether a request the fault hits is carried out by the
// API, unless its client gives up first: always after the fault's phase is
// PhaseAfter, and before it whenever the fault answers with the API's own
// answer (a delay alone, truncate, trickle) rather than in its place.
func (s FaultSpec) CarriesOut() bool {
	if s.Phase == PhaseAfter {
		return true
	}
	return s.Status == 0 && (s.Network == "" || s.Network == NetworkTruncate || s.Network == NetworkTrickle)
}

// What a planned fault holds beside the bytes of its strings: the Fault and
// its seeded draws, and each header's entry in the map.
const (
	faultOverhead       = 512
	faultHeaderOverhead = 64
)

// Bytes is what the fault holds in memory, for the bounds of an account's
// plan and journal and for the memory budget: its strings count whole, as
// each is its own.
func (s FaultSpec) Bytes() int {
	n := faultOverhead + len(s.Event) + len(s.Webhook) + len(s.Method) + len(s.Path) +
		len(s.RetryAfter) + len(s.RetryAfterHeader) + len(s.Network)
	if s.Body != nil {
		n += len(*s.Body)
	}
	for name, value := range s.Headers {
		n += faultHeaderOverhead + len(name) + len(value)
	}
	return n
}

// Matches reports whether the fault is meant for a request.
func (s FaultSpec) Matches(method, path string) bool {
	return s.Event == "" && (s.Method == "" || s.Method == method) && MatchPath(s.Path, path)
}

// MatchesDelivery reports whether the fault is meant for a delivery of an
// event of the given type.
func (s FaultSpec) MatchesDelivery(eventType string) bool {
	return s.Event == EventAny || (s.Event != "" && s.Event == eventType)
}

// MatchPath reports whether path is pattern, or starts with what comes
// before the "*" that ends pattern. The empty pattern matches every path.
func MatchPath(pattern, path string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(path, prefix)
	}
	return pattern == "" || pattern == path
}

// Fault is a planned fault as the controls and the request journal show it.
type Fault struct {
	ID string `json:"id"`
	FaultSpec
	// Left is how many more requests it will hit; nil until cleared.
	Left *int `json:"count"`
	// Fired is how many requests it has hit so far.
	Fired int `json:"fired"`
}

// Shown is the fault as the controls and the journal show it: any API key
// written into its body or headers appears as its hint, as everywhere the
// sandbox shows what it was sent. What it injects is the fault as planned.
func (f Fault) Shown() Fault {
	if f.Body != nil {
		if body := RedactKeys(*f.Body); body != *f.Body {
			f.Body = &body
		}
	}
	for name, value := range f.Headers {
		if RedactKeys(name) != name || RedactKeys(value) != value {
			// Copied, so that the plan's own map is left as planned.
			headers := make(map[string]string, len(f.Headers))
			for name, value := range f.Headers {
				headers[RedactKeys(name)] = RedactKeys(value)
			}
			f.Headers = headers
			break
		}
	}
	return f
}

// faultFields are the fields of a fault body; any other is refused, as a
// misspelt field would otherwise plan a different fault than intended.
var faultFields = []string{"method", "path", "count", "rate", "seed", "status", "retryAfter", "headers", "body", "delayMs", "network", "trickleMs", "phase", "event", "webhook"}

// requestOnlyFields are the fault fields that shape a request's answer,
// which a webhook fault has none of.
var requestOnlyFields = []string{"method", "path", "status", "retryAfter", "headers", "body", "network", "trickleMs", "phase"}

// ParseFaultSpec decodes and validates a fault. Every field is optional, but
// a fault must do something: answer a status (see PlannableStatus), wait
// (delayMs), or fail the network; a webhook fault, one with an event, must
// wait (delayMs) or do what its webhook field says. docs/controls.md says what each field
// does.
func ParseFaultSpec(body []byte) (FaultSpec, error) {
	obj, err := decodeObject(body, faultFields...)
	if err != nil {
		return FaultSpec{}, err
	}
	// decodeObject has checked the body; only the names are wanted here.
	var all map[string]json.RawMessage
	_ = json.Unmarshal(body, &all)
	for _, name := range slices.Sorted(maps.Keys(all)) {
		if !slices.Contains(faultFields, name) {
			obj.errs.add(Echo(name), "is not a fault field; the fields are %s", strings.Join(faultFields, ", "))
		}
	}
	spec := FaultSpec{Count: 1, Rate: 1}
	obj.faultShare(&spec)
	if n, ok := obj.optionalNumber("delayMs"); ok {
		spec.DelayMS = int64(obj.checkInteger("delayMs", n, 0, int(MaxFaultDelay/time.Millisecond)))
	}
	if obj.has("event") || obj.has("webhook") {
		obj.webhookFault(&spec)
		return spec, obj.errs.err()
	}
	if method, ok := obj.optionalString("method"); ok && obj.checkOneOf("method", method, FaultMethods) {
		spec.Method = method
	}
	if path, ok := obj.optionalString("path"); ok {
		spec.Path = path
		obj.checkPathPattern("path", path)
	}
	if n, ok := obj.optionalNumber("status"); ok {
		spec.Status = obj.checkInteger("status", n, 0, 599)
		if spec.Status != 0 && !PlannableStatus(spec.Status) {
			obj.errs.add("status", "must be 200 to 299, a redirect (301, 302, 303, 307, 308), 304, or 400 to 599 (got %d)", spec.Status)
		}
	}
	spec.RetryAfter, spec.RetryAfterHeader = obj.retryAfter(spec.Status)
	spec.Headers = obj.faultHeaders(spec.Status)
	if body, ok := obj.optionalString("body"); ok {
		spec.Body = &body
		if len(body) > MaxFaultBody {
			obj.errs.add("body", "must be at most %d bytes (got %d)", MaxFaultBody, len(body))
		}
		if spec.Status == 0 {
			obj.errs.add("body", "goes only with a status")
		}
		if !BodyAllowed(spec.Status) {
			obj.errs.add("body", "cannot go with status %d, which HTTP answers without a body", spec.Status)
		}
	}
	if redirect(spec.Status) && !hasHeader(spec.Headers, "Location") {
		obj.errs.add("headers", "must hold Location with status %d: a redirect says where to", spec.Status)
	}
	if network, ok := obj.optionalString("network"); ok && obj.checkOneOf("network", network, NetworkFaults) {
		spec.Network = network
		if spec.Status != 0 {
			obj.errs.add("network", "cannot go with a status: a network failure is the whole answer")
		}
	}
	if n, ok := obj.optionalNumber("trickleMs"); ok {
		spec.TrickleMS = int64(obj.checkInteger("trickleMs", n, 1, int(MaxFaultDelay/time.Millisecond)))
		if spec.Network != NetworkTrickle {
			obj.errs.add("trickleMs", "goes only with network \"trickle\"")
		}
	} else if spec.Network == NetworkTrickle {
		spec.TrickleMS = DefaultTrickle.Milliseconds()
	}
	if phase, ok := obj.optionalString("phase"); ok && obj.checkOneOf("phase", phase, FaultPhases) && phase == PhaseAfter {
		spec.Phase = phase
	}
	if (spec.Status == 429 || spec.Status == 503) && spec.RetryAfter == nil {
		spec.RetryAfter, spec.RetryAfterHeader = json.RawMessage("1"), "1"
	}
	if len(obj.errs) == 0 && spec.Status == 0 && spec.DelayMS == 0 && spec.Network == "" {
		obj.errs.add("status", "or delayMs or network is required: a fault must do something")
	}
	return spec, obj.errs.err()
}

// PlannableStatus reports whether a fault may answer status in the API's place:
// a success, with any body the API could send, for a client's decoder to
// meet; a redirect or 304, which a client's HTTP stack acts on; or an
// error. A 1xx is no final answer, and 300, 305 and 306 are answers no
// HTTP stack acts on.
func PlannableStatus(status int) bool {
	return status >= 200 && status <= 299 || redirect(status) || status == http.StatusNotModified || status >= 400 && status <= 599
}

// redirect reports whether status sends the client to its Location.
func redirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// BodyAllowed reports whether an answer of status may carry a body: HTTP
// gives 204, 205 and 304 none.
func BodyAllowed(status int) bool {
	return status != http.StatusNoContent && status != http.StatusResetContent && status != http.StatusNotModified
}

// hasHeader reports whether headers name the canonical header name, in any case.
func hasHeader(headers map[string]string, name string) bool {
	for h := range headers {
		if http.CanonicalHeaderKey(h) == name {
			return true
		}
	}
	return false
}

// faultShare reads how many of what it matches a fault hits: count, or a
// rate drawn from seed.
func (o *requestObject) faultShare(spec *FaultSpec) {
	if n, ok := o.optionalNumber("rate"); ok {
		spec.Rate = o.checkRate("rate", string(n))
		spec.Count = 0
	}
	if n, ok := o.optionalNumber("count"); ok {
		spec.Count = o.checkInteger("count", n, 1, MaxFaultCount)
	}
	if n, ok := o.optionalNumber("seed"); ok {
		spec.Seed = uint64(o.checkInteger("seed", n, 0, MaxFaultSeed))
		if !o.has("rate") {
			o.errs.add("seed", "needs a rate: the seed decides which matching requests a rate hits")
		}
	}
}

// webhookFault reads the fields of a webhook fault into spec and refuses
// those that only shape a request's answer.
func (o *requestObject) webhookFault(spec *FaultSpec) {
	if event, ok := o.optionalString("event"); ok && o.checkOneOf("event", event, EventTypes) {
		spec.Event = event
	} else if !o.has("event") {
		o.errs.add("event", "is required with webhook: the event type whose deliveries the fault hits, or \"*\" for any")
	}
	if kind, ok := o.optionalString("webhook"); ok && o.checkOneOf("webhook", kind, WebhookFaults) {
		spec.Webhook = kind
	}
	for _, name := range requestOnlyFields {
		// null is absent, but for retryAfter, where it asks for an
		// answer without Retry-After.
		if _, named := o.body.Raw(name); o.has(name) || name == "retryAfter" && named {
			o.errs.add(name, "cannot go with event: a webhook fault changes deliveries, not answers")
		}
	}
	if spec.Webhook == WebhookReorder && spec.DelayMS > 0 {
		o.errs.add("delayMs", "cannot go with webhook \"reorder\": a reordered delivery already waits for the next event")
	}
	if len(o.errs) == 0 && spec.Webhook == "" && spec.DelayMS == 0 {
		o.errs.add("webhook", "or delayMs is required: a webhook fault must do something")
	}
}

// retryAfter reads the fault's retryAfter: seconds from 0, an HTTP-date,
// or null for no Retry-After at all. It returns the value as planned and
// the header it stands for.
func (o *requestObject) retryAfter(status int) (json.RawMessage, string) {
	raw, ok := o.raw("retryAfter")
	if !ok {
		// raw reads null as absent; here null is an answer of its own.
		if given, _ := o.body.Raw("retryAfter"); string(given) == "null" {
			if status == 0 {
				o.errs.add("retryAfter", "goes only with a status")
			}
			return json.RawMessage("null"), ""
		}
		return nil, ""
	}
	if status == 0 {
		o.errs.add("retryAfter", "goes only with a status")
	}
	if raw[0] == '"' {
		date, _ := o.optionalString("retryAfter")
		if _, err := http.ParseTime(date); err != nil || len(date) > 64 {
			o.errs.add("retryAfter", "must be seconds, an HTTP-date such as \"Wed, 21 Oct 2026 07:28:00 GMT\", or null (got %q)", Echo(date))
			return nil, ""
		}
		quoted, _ := json.Marshal(date)
		return quoted, date
	}
	n, ok := o.optionalNumber("retryAfter")
	if !ok {
		return nil, ""
	}
	seconds := o.checkInteger("retryAfter", n, 0, MaxFaultRetryAfter)
	text := strconv.Itoa(seconds)
	return json.RawMessage(text), text
}

// faultHeaders reads the extra headers of an injected answer: names HTTP
// allows, other than those that frame the message, and values without
// line breaks.
func (o *requestObject) faultHeaders(status int) map[string]string {
	raw, ok := o.raw("headers")
	if !ok {
		return nil
	}
	var headers map[string]string
	if err := json.Unmarshal(raw, &headers); err != nil {
		o.errs.add("headers", "must be an object of header names and string values")
		return nil
	}
	if status == 0 {
		o.errs.add("headers", "go only with a status")
	}
	if len(headers) > MaxFaultHeaders {
		o.errs.add("headers", "may hold at most %d headers (got %d)", MaxFaultHeaders, len(headers))
		return nil
	}
	seen := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		value := headers[name]
		canonical := http.CanonicalHeaderKey(name)
		switch {
		case len(name) > MaxFaultHeaderName:
			o.errs.add("headers", "a header name must be at most %d bytes (got %d)", MaxFaultHeaderName, len(name))
		case !httpguts.ValidHeaderFieldName(name):
			o.errs.add("headers", "%q is not a header name", Echo(name))
		case seen[canonical] != "":
			// Either would win by the map's order, which changes from run
			// to run.
			o.errs.add("headers", "%s and %s name one header: header names are not case-sensitive", Echo(seen[canonical]), Echo(name))
		case slices.Contains(framingHeaders, canonical):
			o.errs.add("headers", "%s cannot be set: it frames the answer", canonical)
		case proxyHeader(canonical):
			o.errs.add("headers", "%s cannot be set: a proxy in front of the sandbox would act on it", canonical)
		case strings.HasPrefix(canonical, "Access-Control-"):
			o.errs.add("headers", "%s cannot be set: CORS headers are the sandbox's own (-cors-origins)", canonical)
		case !httpguts.ValidHeaderFieldValue(value) || len(value) > MaxFaultHeaderBytes:
			o.errs.add("headers", "the value of %s must be at most %d bytes with no line break", Echo(name), MaxFaultHeaderBytes)
		}
		seen[canonical] = name
	}
	return headers
}

// framingHeaders say where an answer ends; a fault that set them would make
// a broken message rather than an answer, which network faults are for.
var framingHeaders = []string{"Content-Length", "Transfer-Encoding", "Connection", "Trailer", "Keep-Alive", "Upgrade"}

// proxyHeaderPrefixes start the names of answer headers that a proxy or web
// server in front of the sandbox acts on instead of passing on: nginx's
// X-Accel-Redirect fetches another URL and X-Accel-Limit-Rate slows the
// answer, and Apache's, lighttpd's, LiteSpeed's and Envoy's have their own.
// A fault must change the answer a client gets, never what the
// infrastructure does.
var proxyHeaderPrefixes = []string{"X-Accel-", "X-Sendfile", "X-Lighttpd-", "X-Litespeed-", "X-Envoy-"}

// proxyHeader reports whether a canonical header name is one a proxy acts on.
func proxyHeader(canonical string) bool {
	return slices.ContainsFunc(proxyHeaderPrefixes, func(prefix string) bool { return strings.HasPrefix(canonical, prefix) })
}

// ParseJournalFilter checks the method and path filters of the request
// journal, which take the values a fault's method and path do.
func ParseJournalFilter(method, path string) error {
	if method != "" && !slices.Contains(FaultMethods, method) {
		return Errorf(ErrInvalidParameter, "method must be one of %s", strings.Join(FaultMethods, ", "))
	}
	if path != "" {
		var obj requestObject
		if obj.checkPathPattern("path", path); len(obj.errs) > 0 {
			return Errorf(ErrInvalidParameter, "path %s", obj.errs[0].Message)
		}
	}
	return nil
}

// checkPathPattern accepts an API path, or the start of one followed by "*".
func (o *requestObject) checkPathPattern(name, pattern string) {
	prefix, _ := strings.CutSuffix(pattern, "*")
	switch {
	case len(pattern) > MaxPathPattern:
		o.errs.add(name, "must be at most %d bytes", MaxPathPattern)
	case !strings.HasPrefix(pattern, "/v1"):
		o.errs.add(name, "must be an API path, starting with /v1, such as /v1/campaigns or /v1/bugs*")
	case strings.ContainsAny(prefix, "*?#"):
		o.errs.add(name, "may hold a \"*\" only at its end, and no query")
	}
}

// checkRate accepts a share of requests: more than 0, at most 1.
func (o *requestObject) checkRate(name string, n string) float64 {
	rate, err := strconv.ParseFloat(n, 64)
	if err != nil || math.IsNaN(rate) || rate <= 0 || rate > 1 {
		o.errs.add(name, "must be more than 0 and at most 1 (got %s)", n)
		return 0
	}
	return rate
}

// DefaultSettleTimeout is how long a settle waits when the body does not say.
const DefaultSettleTimeout = 5 * time.Second

// ParseSettle decodes {"timeoutMs": N}, how long to wait for an account's
// deliveries to settle: 1 to 30000 ms, 5000 when absent.
func ParseSettle(body []byte) (time.Duration, error) {
	obj, err := decodeObject(body, "timeoutMs")
	if err != nil {
		return 0, err
	}
	var all map[string]json.RawMessage
	_ = json.Unmarshal(body, &all)
	for _, name := range slices.Sorted(maps.Keys(all)) {
		if name != "timeoutMs" {
			obj.errs.add(Echo(name), "is not a field; the only field is timeoutMs")
		}
	}
	timeout := DefaultSettleTimeout
	if n, ok := obj.optionalNumber("timeoutMs"); ok {
		timeout = time.Duration(obj.checkInteger("timeoutMs", n, 1, int(MaxFaultDelay/time.Millisecond))) * time.Millisecond
	}
	return timeout, obj.errs.err()
}

// ParseClockMove decodes {"advance": "<duration>"}, a forward move of the
// frozen clock of at most a year.
func ParseClockMove(body []byte) (time.Duration, error) {
	obj, err := decodeObject(body, "advance")
	if err != nil {
		return 0, err
	}
	raw, ok := obj.requireString("advance")
	d, parseErr := time.ParseDuration(raw)
	if ok && (parseErr != nil || d <= 0 || d > MaxClockMove) {
		obj.errs.add("advance", "must be a positive duration of at most %s, such as \"90s\" or \"1h30m\" (got %q)", MaxClockMove, Echo(raw))
	}
	return d, obj.errs.err()
}
