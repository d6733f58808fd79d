package model

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/testcampaign/kit/conformance/internal/wire"
)

// recordKind names the lists of an account.
type recordKind int

// The lists of an account the runner reads a fresh account's seed of.
const (
	KindCampaign recordKind = iota
	KindBug
	KindTester
	kindEvent
)

// kindInfo says how each kind is named and listed; listRule is the rule
// that its list answers the account's records, where one says so.
var kindInfo = [...]struct{ prefix, path, name, listRule string }{
	KindCampaign: {"cmp", "/v1/campaigns", "campaign", "CMP-5"},
	KindBug:      {"bug", "/v1/bugs", "bug", "BUG-1"},
	KindTester:   {"tst", "/v1/testers", "tester", ""},
	kindEvent:    {"evt", "/_sandbox/events", "event", ""},
}

// record is one record as the account must return it. Seeded records are
// as old as their fixture says relative to the account's first use, so
// their timestamps are learned on this account before they are held.
type record struct {
	v      map[string]any
	pinned bool
	// refused: the last change asked of it was refused, which must have
	// left it as it was (BUG-18).
	refused bool
}

// account is the model of one key's account.
type account struct {
	key      string
	owned    bool
	fresh    bool // the run made the key and no answer has come yet
	inflight map[*Flight]bool
	// records of campaigns, bugs and testers; complete when the model holds
	// every one the account has (an owned account started from the seed).
	records  [3]map[string]*record
	complete bool
	// seedPinned: the seeded records' timestamps have been placed on this
	// account's clock.
	seedPinned bool
	// next is the next ID number per prefix; 0 means "the first a fresh
	// account gives", absent means unknown.
	next map[string]int
	// refusedSince are the prefixes whose creating request was refused
	// since the last ID of the prefix: the next ID tells whether the
	// refusal used one (ACCT-6).
	refusedSince map[string]bool
	// webhooks registered, exact when webhooksKnown.
	webhooks      map[string]map[string]any
	webhooksKnown bool
	// events are the account's events oldest first: type and data.
	events      []modelEvent
	eventsKnown bool
	// reqlog is the /v1 requests of the account, oldest first.
	reqlog   []logEntry
	logKnown bool
	v1, ctl  rateState
	plan     faultPlan
	clock    clockState
	walks    map[string]*pageWalk
	history  []string
}

type modelEvent struct {
	typ  string
	data map[string]any
}

// logEntry is a journal entry as the model holds it; status 0 is no
// answer sent, fault the id of the fault that hit it, if one did.
type logEntry struct {
	method, path, query string
	status              int
	fault               string
	// size estimates what the entry takes of the journal's bytes (JRNL-2).
	size int
}

// entrySize estimates what a request takes of the journal's bytes: what it
// sent, its body cut to 2 KiB, and the sandbox's own overhead per entry.
func entrySize(method, path, query string, header http.Header, body int) int {
	n := len(method) + len(path) + len(query) + min(body, 2<<10) + 384
	for name, values := range header {
		for _, v := range values {
			n += len(name) + len(v) + 16
		}
	}
	return n
}

// pageWalk is a list being read page by page: the cursor it handed out, where
// the next page must start, and what it has shown.
type pageWalk struct {
	kind   recordKind
	filter string
	// after is the last item of the page that handed out the cursor: the
	// next page starts right after it, whatever was written since (LIST-9).
	after map[string]any
	seen  map[string]bool
}

func newAccount(key string) *account {
	a := &account{key: key, inflight: map[*Flight]bool{}, next: map[string]int{}, walks: map[string]*pageWalk{}}
	for i := range a.records {
		a.records[i] = map[string]*record{}
	}
	return a
}

// Seed is what a fresh account holds, read once at the start of a
// run from a key nobody else uses.
type Seed struct {
	Records [3]map[string]map[string]any
	next    map[string]int
}

// startFresh makes the account what a fresh one is: the seed, no
// webhooks, events, logged requests or faults, and whole windows.
func (a *account) startFresh(seed *Seed) {
	a.reseed(seed)
	a.ctl = rateState{untouched: true}
	a.fresh = true
}

// reseed is what a fresh account and a reset have in common; a reset
// keeps the controls' budget (README).
func (a *account) reseed(seed *Seed) {
	for i := range a.records {
		a.records[i] = map[string]*record{}
	}
	a.next = map[string]int{"whk": 0, "evt": 0}
	a.refusedSince = nil
	a.complete = seed != nil
	a.seedPinned = seed == nil
	if seed != nil {
		for i := range seed.Records {
			for id, v := range seed.Records[i] {
				a.records[i][id] = &record{v: v}
			}
		}
		for p, n := range seed.next {
			a.next[p] = n
		}
	}
	a.webhooks, a.webhooksKnown = map[string]map[string]any{}, true
	a.events, a.eventsKnown = nil, true
	a.reqlog, a.logKnown = nil, true
	a.plan = faultPlan{known: true}
	a.v1 = rateState{untouched: true}
	a.walks = map[string]*pageWalk{}
}

// forget drops what an unanswered request may have changed.
func (a *account) forget() {
	a.carriedOutUnseen()
	a.plan.known, a.ctl.known = false, false
}

// carriedOutUnseen drops what a /v1 request the API may have carried out,
// its answer unseen, may have written and spent: carried out and then cut
// (FAULT-41), it may have spent the first unit of a fresh window.
func (a *account) carriedOutUnseen() {
	a.forgetWrites()
	a.v1.known, a.v1.untouched = false, false
}

// forgetWrites drops what a request carried out without its answer being
// seen may have written: records, IDs, events, webhooks and its journal
// entry, whose status is the API's.
func (a *account) forgetWrites() {
	a.complete, a.eventsKnown, a.logKnown, a.webhooksKnown = false, false, false, false
	for p := range a.next {
		delete(a.next, p)
	}
}

func (a *account) remember(line string) {
	a.history = append(a.history, line)
	if len(a.history) > historyShown {
		a.history = a.history[len(a.history)-historyShown:]
	}
}

// logRequest keeps the /v1 request log the account must show; order is
// known only when no requests overlapped.
func (a *account) logRequest(o *observed, exact bool, fault string) {
	if !exact {
		a.logKnown = false
	}
	a.reqlog = append(a.reqlog, logEntry{method: o.Method, path: o.Path, query: o.RawQuery, status: o.Status, fault: fault,
		size: entrySize(o.Method, o.Path, o.RawQuery, o.ReqHeader, len(o.ReqBody))})
	if len(a.reqlog) > 200 {
		a.reqlog = a.reqlog[len(a.reqlog)-100:]
	}
}

var idRe = regexp.MustCompile(`^([a-z]+)_([0-9]+)$`)

func parseID(id string) (prefix string, n, width int, ok bool) {
	m := idRe.FindStringSubmatch(id)
	if m == nil {
		return "", 0, 0, false
	}
	n, err := strconv.Atoi(m[2])
	return m[1], n, len(m[2]), err == nil
}

// newID checks an ID the server just assigned: its prefix, and on an owned
// account the next number of the account's own sequence (ACCT-5: the same
// requests on any fresh account give the same IDs; ACCT-6: a refused
// request uses no ID).
func (c *check) newID(prefix, id string) {
	p, n, width, ok := parseID(id)
	if c.sandbox {
		c.judge("ACCT-4")
	}
	if !strings.HasPrefix(id, prefix+"_") {
		if c.sandbox {
			c.fail("ACCT-4", "IDs carry their prefix", prefix+"_…", id)
		}
		return
	}
	if !ok || p != prefix {
		return
	}
	a := c.a
	want, known := a.next[prefix]
	switch {
	case !c.exact || !known || !c.sandbox:
	case want == 0:
		if _, seen := c.m.firstIDs[prefix]; seen {
			c.judge("ACCT-5")
		}
		if first, seen := c.m.firstIDs[prefix]; seen && first != id {
			c.fail("ACCT-5", "every fresh account gives the same IDs", first+", the first "+prefix+" ID other fresh accounts gave", id)
		}
	default:
		refused := a.refusedSince[prefix]
		if refused {
			c.judge("ACCT-6")
		}
		if n != want {
			wantID := fmt.Sprintf("%s_%0*d", prefix, width, want)
			if refused {
				wantID += ", the ID the refused request must not have used"
			}
			c.fail("ACCT-6", "IDs follow the account's own sequence, and a refused request uses none", wantID, id)
		}
	}
	if c.exact && known && want == 0 {
		if _, seen := c.m.firstIDs[prefix]; !seen {
			c.m.firstIDs[prefix] = id
		}
	}
	if known || c.exact {
		a.next[prefix] = max(a.next[prefix], n+1)
	}
	delete(a.refusedSince, prefix)
}

// ordered returns the records of kind newest first: createdAt descending,
// then the later ID first, as a list must give them.
func (a *account) ordered(kind recordKind, keep func(map[string]any) bool) []map[string]any {
	var out []map[string]any
	for _, r := range a.records[kind] {
		if keep == nil || keep(r.v) {
			out = append(out, r.v)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		ti, _ := wire.ParseTimestamp(str(out[i]["createdAt"]))
		tj, _ := wire.ParseTimestamp(str(out[j]["createdAt"]))
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		_, ni, _, _ := parseID(str(out[i]["id"]))
		_, nj, _, _ := parseID(str(out[j]["id"]))
		return ni > nj
	})
	return out
}

// pinSeed places the seeded records on this account's clock the first time
// one of them is seen: all are as old relative to the account's first use
// as on the account the seed was read from, so one offset moves them all.
func (a *account) pinSeed(kind recordKind, got map[string]any) {
	r := a.records[kind][str(got["id"])]
	if a.seedPinned || r == nil || r.pinned {
		return
	}
	seen, err1 := wire.ParseTimestamp(str(got["createdAt"]))
	was, err2 := wire.ParseTimestamp(str(r.v["createdAt"]))
	if err1 != nil || err2 != nil {
		return
	}
	shift := seen.Sub(was)
	for i := range a.records {
		for _, rec := range a.records[i] {
			if rec.pinned {
				continue
			}
			v := copyMap(rec.v)
			for _, f := range []string{"createdAt", "updatedAt"} {
				if t, err := wire.ParseTimestamp(str(v[f])); err == nil {
					v[f] = t.Add(shift).UTC().Format(timestampLayout)
				}
			}
			rec.v, rec.pinned = v, true
		}
	}
	a.seedPinned = true
}

// timestampLayout is the contract's form: RFC 3339 UTC, three fractional
// digits.
const timestampLayout = "2006-01-02T15:04:05.000Z07:00"

func str(v any) string {
	s, _ := v.(string)
	return s
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
