package model

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/testcampaign/kit/conformance/internal/wire"
)

// controls dispatches an exchange with /_sandbox/ to its rule (README,
// "Sandbox controls").
func (c *check) controls() {
	o := c.o
	switch {
	case o.Path == "/_sandbox/reset" && o.Method == http.MethodPost:
		c.reset()
	case o.Path == "/_sandbox/bugs" && o.Method == http.MethodPost:
		c.fileBug()
	case o.Path == "/_sandbox/faults" && o.Method == http.MethodPost:
		c.planFault()
	case o.Path == "/_sandbox/faults" && o.Method == http.MethodDelete:
		c.clearFaults()
	case o.Path == "/_sandbox/faults" && o.Method == http.MethodGet:
		c.listFaults()
	case o.Path == "/_sandbox/clock" && o.Method == http.MethodPost:
		c.moveClock()
	case o.Path == "/_sandbox/events" && o.Method == http.MethodGet:
		c.list(kindEvent)
		c.events()
	case o.Path == "/_sandbox/requests" && o.Method == http.MethodGet:
		c.requestLog()
	case o.Path == "/_sandbox/deliveries" && o.Method == http.MethodGet:
		c.deliveries()
	}
}

// reset replaces the account with a freshly seeded one: records, IDs,
// clock, /v1 counts, faults, the request log, webhooks and their pending
// deliveries (README); the controls' budget carries on.
func (c *check) reset() {
	if c.o.Status != http.StatusOK {
		return
	}
	a := c.a
	if a.owned {
		a.reseed(c.m.seed)
	} else {
		a.reseed(nil)
		a.forget()
	}
	a.clock.mayRewind = true
	if c.m.frozen == 1 && !a.clock.start.IsZero() {
		a.clock.now, a.clock.nowExact = a.clock.start, false
	} else {
		a.clock.now, a.clock.nowExact = time.Time{}, false
	}
}

// Bounds of a filed bug's text, in characters (CTL-7).
const (
	maxBugTitle       = 200
	maxBugDescription = 10000
)

// fileBug is a tester filing a bug: new, no resolution, the oldest tester
// on the campaign's platform unless one is named.
func (c *check) fileBug() {
	o := c.o
	b, ok := c.body()
	if !ok {
		return
	}
	a := c.a
	campaign := a.records[KindCampaign][str(b["campaignId"])]
	title, titleOK := b["title"].(string)
	sev, _ := b["severity"].(string)
	tester, named := b["testerId"]
	desc, hasDesc := b["description"]
	// A null description is no description: the bug is filed with "".
	hasDesc = hasDesc && desc != nil
	descText, descOK := desc.(string)
	switch {
	case !titleOK || strings.TrimSpace(title) == "" || utf8.RuneCountInString(title) > maxBugTitle || !slices.Contains(BugSeverities, sev):
		c.expectRefusal("CTL-7", "a bug without a title of 1 to 200 characters, or with an unknown severity", 0)
		return
	case hasDesc && (!descOK || utf8.RuneCountInString(descText) > maxBugDescription):
		c.expectRefusal("CTL-7", "a bug whose description is not text of at most 10000 characters", 0)
		return
	case campaign == nil && a.complete && c.exact:
		c.expectRefusal("CTL-6", "a bug on a campaign the account does not hold", 0)
		return
	case named && a.complete && c.exact && a.records[KindTester][str(tester)] == nil:
		c.expectRefusal("CTL-6", "a bug filed by a tester the account does not hold", 0)
		return
	}
	if o.Status != http.StatusOK || o.data() == nil {
		if c.exact && a.complete && campaign != nil && (!named || a.records[KindTester][str(tester)] != nil) {
			c.expectSuccess("CTL-4", "a tester filing a bug on a campaign of the account")
		}
		return
	}
	d := o.data()
	want := map[string]any{"campaignId": b["campaignId"], "title": title, "severity": sev, "status": "new", "resolution": nil}
	if hasDesc {
		want["description"] = desc
	}
	if named {
		want["testerId"] = tester
	} else if campaign != nil && a.complete {
		if t := a.oldestTester(str(campaign.v["platform"])); t != "" {
			want["testerId"] = t
		}
	}
	for k, w := range want {
		c.judge("CTL-4")
		if diff := c.sameJSON(w, d[k]); diff != "" {
			c.fail("CTL-4", "a filed bug holds what was sent, new and unresolved", k+" "+compactJSON(w), compactJSON(d[k]))
		}
	}
	c.judge("CTL-4")
	if d["createdAt"] != d["updatedAt"] {
		c.fail("CTL-4", "a new bug was updated when it was created", "updatedAt "+compactJSON(d["createdAt"]), compactJSON(d["updatedAt"]))
	}
	id := str(d["id"])
	c.newID("bug", id)
	c.stamped("createdAt", str(d["createdAt"]))
	a.records[KindBug][id] = &record{v: copyMap(d), pinned: true}
	a.addEvent("bug.created", d, c.exact)
}

// oldestTester is the tester who files a bug nobody named: the oldest on
// the platform, or "" when two are equally old.
func (a *account) oldestTester(platform string) string {
	var best map[string]any
	tie := false
	for _, r := range a.records[KindTester] {
		if !matchesFilter(KindTester, r.v, "platform", platform) {
			continue
		}
		if best == nil {
			best = r.v
			continue
		}
		tb, _ := wire.ParseTimestamp(str(best["createdAt"]))
		tr, _ := wire.ParseTimestamp(str(r.v["createdAt"]))
		switch {
		case tr.Before(tb):
			best, tie = r.v, false
		case tr.Equal(tb):
			tie = true
		}
	}
	if best == nil || tie {
		return ""
	}
	return str(best["id"])
}

// moveClock: POST /_sandbox/clock moves a frozen clock by exactly the
// advance, and is 409 CONFLICT on a running clock (README).
func (c *check) moveClock() {
	o := c.o
	m := c.m
	switch o.Status {
	case http.StatusConflict:
		if m.frozen == 1 {
			c.judge("CLK-2")
			c.fail("CLK-2", "a frozen clock stays frozen", "200 from POST /_sandbox/clock", "409")
		}
		m.frozen = -1
		return
	case http.StatusOK:
	default:
		return
	}
	if m.frozen == -1 {
		c.judge("CLK-4")
		c.fail("CLK-4", "a running clock cannot be moved", "409 CONFLICT", "200")
	}
	m.frozen = 1
	var b struct{ Advance string }
	now, err := wire.ParseTimestamp(str(o.data()["now"]))
	if json.Unmarshal(o.ReqBody, &b) != nil || err != nil {
		c.a.clock.now = time.Time{}
		return
	}
	d, derr := time.ParseDuration(b.Advance)
	cl := &c.a.clock
	if derr == nil && c.exact && !cl.now.IsZero() && cl.nowExact {
		c.judge("CLK-2")
	}
	if derr == nil && c.exact && !cl.now.IsZero() && cl.nowExact && !now.Equal(cl.now.Add(d)) {
		c.fail("CLK-2", "POST /_sandbox/clock moves the account's clock by exactly the advance", cl.now.Add(d).UTC().Format(timestampLayout), str(o.data()["now"]))
	}
	cl.now, cl.nowExact = now, true
}

// events holds GET /_sandbox/events to the events the account's writes
// owe: one per campaign created, bug filed and bug changed, newest first,
// each carrying the record as that write answered it.
func (c *check) events() {
	o := c.o
	a := c.a
	d := o.data()
	if o.Status != http.StatusOK || d == nil || !c.exact || !a.eventsKnown || len(o.Query) > 0 {
		if o.Status == http.StatusOK && d != nil && len(o.Query) == 0 && c.exact && d["hasMore"] == false {
			a.learnEvents(d)
		}
		return
	}
	items, _ := d["items"].([]any)
	for i, it := range items {
		e, _ := it.(map[string]any)
		k := len(a.events) - 1 - i
		c.judge("EVT-1")
		if k < 0 {
			c.fail("EVT-1", "every event is owed by a write of the account", fmt.Sprintf("%d events", len(a.events)), fmt.Sprintf("at least %d", len(items)))
			return
		}
		want := a.events[k]
		c.judge("EVT-4")
		if str(e["type"]) != want.typ {
			c.fail("EVT-4", "each write records its event, newest first", fmt.Sprintf("event %d from the newest: %s", i+1, want.typ), compactJSON(e["type"]))
			return
		}
		data, _ := e["data"].(map[string]any)
		c.judge("EVT-2")
		if w, g := fieldDiff(want.data, data, c); w != "" {
			c.fail("EVT-2", "an event carries the record as its write answered it", want.typ+" "+w, g)
			return
		}
		if i > 0 {
			_, prev, _, ok1 := parseID(str(items[i-1].(map[string]any)["id"]))
			_, n, _, ok2 := parseID(str(e["id"]))
			c.judge("ACCT-5")
			if ok1 && ok2 && n != prev-1 {
				c.fail("ACCT-5", "event IDs follow the account's sequence", fmt.Sprintf("evt %d", prev-1), str(e["id"]))
			}
		}
	}
	c.judge("EVT-1")
	if d["hasMore"] == false && len(items) != len(a.events) {
		c.fail("EVT-1", "each write records exactly one event", fmt.Sprintf("%d events", len(a.events)), strconv.Itoa(len(items)))
	}
}

func (a *account) learnEvents(d map[string]any) {
	items, _ := d["items"].([]any)
	a.events = nil
	for i := len(items) - 1; i >= 0; i-- {
		e, _ := items[i].(map[string]any)
		data, _ := e["data"].(map[string]any)
		a.events = append(a.events, modelEvent{typ: str(e["type"]), data: data})
	}
	a.eventsKnown = true
}

// journalMethods are the methods a journal filter (and a fault) takes.
var journalMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}

// journalBytesJudged is how much the model's estimate of the journal's
// entries may reach before it stops holding the journal to every entry:
// under the journal's 64 KiB bound (JRNL-2) with room for what the client
// adds to each request (User-Agent, Accept-Encoding) that the model does
// not see.
const journalBytesJudged = 40 << 10

// requestLog holds GET /_sandbox/requests to the /v1 requests the account
// was sent since it was fresh or reset, newest first (JRNL-1), filtered by
// method and path when asked (JRNL-13, JRNL-14).
func (c *check) requestLog() {
	o := c.o
	a := c.a
	filter := &plannedFault{}
	for name, vals := range o.Query {
		if len(vals) != 1 || (name != "method" && name != "path") {
			return
		}
		v := vals[0]
		prefix, _ := strings.CutSuffix(v, "*")
		switch {
		case name == "method" && v != "" && !slices.Contains(journalMethods, v),
			name == "path" && v != "" && (!strings.HasPrefix(v, "/v1") || strings.ContainsAny(prefix, "*?#") || len(v) > 256):
			c.expectRefusal("JRNL-14", "a journal filter a fault could not take", http.StatusBadRequest, "INVALID_PARAMETER")
			return
		case name == "method":
			filter.method = v
		default:
			filter.path = v
		}
	}
	d := o.data()
	if o.Status != http.StatusOK || d == nil || !c.exact || !a.logKnown {
		return
	}
	var logged []logEntry
	size := 0
	for _, e := range a.reqlog {
		if filter.path != "" && strings.Contains(e.path, "svc_") {
			// The journal matches the path as it shows it, redacted.
			return
		}
		size += e.size
		if filter.matches(e.method, e.path) {
			logged = append(logged, e)
		}
	}
	items, _ := d["items"].([]any)
	for i, it := range items {
		e, _ := it.(map[string]any)
		k := len(logged) - 1 - i
		c.judge("JRNL-1")
		if filter.method != "" || filter.path != "" {
			c.judge("JRNL-13")
		}
		if k < 0 {
			c.fail("JRNL-1", "the request log holds the account's own /v1 requests since it was fresh or reset, filtered as asked (JRNL-13)", fmt.Sprintf("%d requests", len(logged)), fmt.Sprintf("at least %d", len(items)))
			return
		}
		want := logged[k]
		want.size = 0
		got := logEntry{method: str(e["method"]), path: str(e["path"]), query: str(e["query"])}
		got.status, _ = intOf(e["status"])
		if f, ok := e["fault"].(map[string]any); ok {
			got.fault = str(f["id"])
		}
		for _, text := range []string{got.path, got.query} {
			c.judge("JRNL-12")
			if rawKeyRe.MatchString(text) {
				c.fail("JRNL-12", "the journal shows every API key only as its hint", "svc_test_…abcd", text)
				return
			}
		}
		if hiddenKey(want.query) {
			// A key written with escapes: the journal shows the query
			// unescaped, as it redacts it.
			got.query, want.query = "", ""
		}
		want.path, want.query = hintKeys(want.path), hintKeys(want.query)
		got.path, got.query = hintKeys(got.path), hintKeys(got.query)
		// A path or query over 256 bytes is cut (JRNL-6).
		if len(want.query) > 256 {
			got.query, want.query = "", ""
		}
		if len(want.path) > 256 {
			got.path, want.path = "", ""
		}
		c.judge("JRNL-3")
		if got != want {
			c.fail("JRNL-3", "the request log shows each request as sent and answered", fmt.Sprintf("%d from the newest: %s", i+1, want), got.String())
			return
		}
	}
	if len(a.reqlog) > 100 && d["hasMore"] == false {
		c.m.gap(fmt.Sprintf("the length of a request log past %d requests: the model keeps only an account's newest requests", 100))
	}
	if d["hasMore"] == false && len(a.reqlog) <= 100 && size <= journalBytesJudged {
		c.judge("JRNL-1")
		if len(items) != len(logged) {
			c.fail("JRNL-1", "the request log holds every /v1 request since the account was fresh or reset, filtered as asked (JRNL-13), while well within its bounds (JRNL-2)", fmt.Sprintf("%d requests", len(logged)), strconv.Itoa(len(items)))
		}
	}
}

// rawKeyRe finds an API key shown whole: its prefix and then a secret
// character, where a hint has "…".
var rawKeyRe = regexp.MustCompile(`svc_(test|live)_[A-Za-z0-9_-]`)

// keyOrHintRe finds a key or its hint.
var keyOrHintRe = regexp.MustCompile(`svc_(test|live)_(…[A-Za-z0-9_-]{0,4}|[A-Za-z0-9_-]+)`)

// hintKeys writes every key or key hint in s the same way, so that what a
// client sent compares with what the journal shows of it (JRNL-12).
func hintKeys(s string) string {
	return keyOrHintRe.ReplaceAllString(s, "svc_${1}_…")
}

// hiddenKey says whether a raw query holds a key only once unescaped.
func hiddenKey(raw string) bool {
	u, err := url.QueryUnescape(raw)
	return err == nil && u != raw && rawKeyRe.MatchString(u) && !rawKeyRe.MatchString(raw)
}

func (e logEntry) String() string {
	s := e.method + " " + e.path
	if e.query != "" {
		s += "?" + e.query
	}
	status := "no answer"
	if e.status != 0 {
		status = strconv.Itoa(e.status)
	}
	s += " → " + status
	if e.fault != "" {
		s += " (fault " + e.fault + ")"
	}
	return s
}

// deliveries: every attempt is to a webhook of the account that wants the
// event's type, at its URL.
func (c *check) deliveries() {
	o := c.o
	a := c.a
	d := o.data()
	if o.Status != http.StatusOK || d == nil || !c.exact || !a.webhooksKnown || a.clock.mayRewind {
		return
	}
	items, _ := d["items"].([]any)
	for _, it := range items {
		e, _ := it.(map[string]any)
		w := a.webhooks[str(e["webhookId"])]
		c.judge("ACCT-2")
		if w == nil {
			c.fail("ACCT-2", "deliveries go only to the account's own webhooks", "a webhook the account registered", compactJSON(e))
			return
		}
		subscribed := false
		evs, _ := w["events"].([]any)
		for _, ev := range evs {
			subscribed = subscribed || ev == "*" || ev == e["eventType"]
		}
		c.judge("DLV-1")
		if !subscribed || w["url"] != e["url"] {
			c.fail("DLV-1", "a webhook is sent only the event types it registered, at its URL", fmt.Sprintf("%s at %s", compactJSON(w["events"]), str(w["url"])), compactJSON(e))
			return
		}
	}
}

// seedGetter answers a GET of path (a list with its query) on an account
// nobody else uses: the status and the body.
type seedGetter func(ctx context.Context, path string) (int, []byte, error)

// maxSeedPages bounds the pages ReadSeed reads of one list: a seed larger
// than that is not one the model can hold exactly.
const maxSeedPages = 100

// ReadSeed reads what a fresh account holds, through get: every campaign,
// bug and tester, and the next ID of each sequence. Its error says why the
// model cannot hold fresh accounts exactly, for the report to say so.
func ReadSeed(ctx context.Context, get seedGetter) (*Seed, error) {
	s := &Seed{next: map[string]int{}}
	for _, kind := range []recordKind{KindCampaign, KindBug, KindTester} {
		s.Records[kind] = map[string]map[string]any{}
		cursor := ""
		for page := 0; ; page++ {
			if page == maxSeedPages {
				return nil, fmt.Errorf("%s holds more than %d pages of 100", kindInfo[kind].path, maxSeedPages)
			}
			target := kindInfo[kind].path + "?limit=100"
			if cursor != "" {
				target += "&cursor=" + url.QueryEscape(cursor)
			}
			status, b, err := get(ctx, target)
			if err != nil {
				return nil, fmt.Errorf("GET %s: %w", target, err)
			}
			if status != http.StatusOK {
				return nil, fmt.Errorf("GET %s answered %d", target, status)
			}
			v, err := wire.DecodeJSON(b)
			if err != nil {
				return nil, fmt.Errorf("GET %s: %w", target, err)
			}
			d, _ := wire.Lookup(v, "data")
			dm, _ := d.(map[string]any)
			items, _ := dm["items"].([]any)
			for _, it := range items {
				rec, ok := it.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("GET %s: an item is not an object", target)
				}
				id := str(rec["id"])
				s.Records[kind][id] = rec
				if p, n, _, ok := parseID(id); ok && p == kindInfo[kind].prefix {
					s.next[p] = max(s.next[p], n+1)
				}
			}
			cursor, _ = dm["nextCursor"].(string)
			if cursor == "" {
				break
			}
		}
		p := kindInfo[kind].prefix
		if _, ok := s.next[p]; !ok {
			if len(s.Records[kind]) > 0 {
				return nil, fmt.Errorf("the IDs of %s are not %s_ and a number, so the model cannot follow their sequence", kindInfo[kind].path, p)
			}
			s.next[p] = 0
		}
	}
	return s, nil
}
