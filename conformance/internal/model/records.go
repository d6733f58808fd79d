package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/testcampaign/kit/conformance/internal/wire"
)

// The contract's vocabularies (docs/contract.md).
var (
	Platforms       = []string{"ios", "android", "web"}
	CampaignStates  = []string{"draft", "active", "completed"}
	BugStatuses     = []string{"new", "confirmed", "in_progress", "resolved", "closed"}
	BugSeverities   = []string{"low", "medium", "high", "critical"}
	bugResolutions  = []string{"fixed", "wont_fix", "duplicate", "cannot_reproduce", "not_a_bug"}
	webhookEvents   = []string{"campaign.created", "bug.created", "bug.updated", "*"}
	bugTransitions  = map[string][]string{"new": {"confirmed", "closed"}, "confirmed": {"in_progress", "resolved", "closed"}, "in_progress": {"resolved", "closed"}, "resolved": {"closed", "confirmed"}, "closed": {"confirmed"}}
	campaignFields  = []string{"id", "name", "platform", "testersRequired", "rewardPerBug", "status", "createdAt"}
	maxWebhooks     = 16
	maxLiteral      = 32
	maxRequestBody  = 1 << 20
	defaultPageSize = 20
)

// body reads a request body the way the contract does and, when the
// contract refuses it as a whole, checks the refusal. ok is false then.
func (c *check) body() (map[string]any, bool) {
	o := c.o
	if len(o.ReqBody) > maxRequestBody {
		c.expectRefusal("ERR-19", "a body over 1 MiB", http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
		return nil, false
	}
	ct := o.ReqHeader.Get("Content-Type")
	if !mediaTypeIsJSON(ct) {
		if c.sandbox {
			if len(o.ReqBody) == 0 {
				c.expectRefusal("ERR-8", "a request without a JSON body", 0)
			} else {
				c.expectRefusal("ERR-18", "a body without Content-Type application/json", http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
			}
		}
		return nil, false
	}
	if c.sandbox && o.Status == http.StatusUnsupportedMediaType {
		c.fail("ERR-18", "a body sent as application/json, with parameters or in any case, is read", "the body read", fmt.Sprintf("415 for Content-Type %q", ct))
		return nil, false
	}
	obj, dup, err := decodeStrictObject(o.ReqBody)
	if err != nil {
		rule := "ERR-9"
		switch {
		case len(bytes.TrimSpace(o.ReqBody)) == 0:
			rule = "ERR-8"
		case strings.Contains(err.Error(), "trailing data"):
			rule = "ERR-10"
		}
		c.expectRefusal(rule, "a body that is not one JSON object", http.StatusBadRequest, "INVALID_JSON")
		return nil, false
	}
	if c.sandbox && nestedDeeperThan(o.ReqBody, maxJSONDepth) {
		c.expectRefusal("ERR-12", "JSON nested deeper than 64 levels", http.StatusBadRequest, "INVALID_JSON")
		return nil, false
	}
	if dup && c.m.Switches.DuplicateFields && c.sandbox {
		c.expectRefusal("ERR-11", "a JSON object with a duplicated field", http.StatusBadRequest, "INVALID_JSON")
		return nil, false
	}
	if dup && c.o.Status == http.StatusBadRequest && c.o.errorCode() == "INVALID_JSON" {
		// A run not held to ERR-11 lets a deployment refuse the body or
		// read it; refused, nothing was written.
		return nil, false
	}
	return obj, true
}

// maxJSONDepth is how deep a request body's JSON may nest (ERR-12).
const maxJSONDepth = 64

// nestedDeeperThan says whether the JSON of b opens more than depth
// objects and arrays inside one another.
func nestedDeeperThan(b []byte, depth int) bool {
	level := 0
	inString, escaped := false, false
	for _, ch := range b {
		switch {
		case escaped:
			escaped = false
		case inString && ch == '\\':
			escaped = true
		case ch == '"':
			inString = !inString
		case inString:
		case ch == '{' || ch == '[':
			level++
			if level > depth {
				return true
			}
		case ch == '}' || ch == ']':
			level--
		}
	}
	return false
}

// verdict is what validation makes of a body: fields certainly invalid, and
// fields whose reading the contract leaves open (either answer is fine, as
// long as an accepted value comes back as sent). bounds names the rule that
// sets a field's bounds, where one does: an answer that takes a value out
// of them breaks that rule as well as ERR-6.
type verdict struct {
	invalid, maybe []string
	bounds         map[string]string
}

func (v *verdict) add(field string, certain bool) {
	if certain {
		v.invalid = append(v.invalid, field)
	} else {
		v.maybe = append(v.maybe, field)
	}
}

func (c *check) numberLiteral(v *verdict, field, lit string) bool {
	if len(lit) > maxLiteral {
		v.add(field, c.m.Switches.LongNumbers)
		return false
	}
	return true
}

// validateCampaign applies the bounds of a campaign create (CMP-9 to CMP-12).
func (c *check) validateCampaign(b map[string]any) verdict {
	v := verdict{bounds: map[string]string{"name": "CMP-9", "platform": "CMP-10", "testersRequired": "CMP-11", "rewardPerBug": "CMP-12"}}
	switch name, ok := b["name"].(string); {
	case !ok, utf8.RuneCountInString(name) < 1, utf8.RuneCountInString(name) > 200, strings.TrimSpace(name) == "":
		v.add("name", true)
	}
	if p, ok := b["platform"].(string); !ok || !slices.Contains(Platforms, p) {
		v.add("platform", true)
	}
	switch n, ok := b["testersRequired"].(json.Number); {
	case !ok:
		v.add("testersRequired", true)
	case !c.numberLiteral(&v, "testersRequired", string(n)):
	default:
		r, _ := new(big.Rat).SetString(string(n))
		inRange := r.IsInt() && r.Cmp(big.NewRat(1, 1)) >= 0 && r.Cmp(big.NewRat(10000, 1)) <= 0
		switch {
		case wire.IsIntegerLiteral(string(n)) && !strings.HasPrefix(string(n), "-"):
			if !inRange {
				v.add("testersRequired", true)
			}
		case strings.Contains(string(n), "."), !inRange:
			v.add("testersRequired", true) // 10.0 is refused, not truncated
		default:
			v.add("testersRequired", false) // 1e1
		}
	}
	switch n, ok := b["rewardPerBug"].(json.Number); {
	case !ok:
		v.add("rewardPerBug", true)
	case !c.numberLiteral(&v, "rewardPerBug", string(n)):
	default:
		lit := string(n)
		r, _ := new(big.Rat).SetString(lit)
		cents := new(big.Rat).Mul(r, big.NewRat(100, 1))
		inRange := r.Sign() >= 0 && r.Cmp(big.NewRat(100000, 1)) <= 0 && cents.IsInt()
		plain := !strings.ContainsAny(lit, "eE-")
		_, frac, _ := strings.Cut(lit, ".")
		switch {
		case !inRange:
			v.add("rewardPerBug", true)
		case plain && len(frac) <= 2:
		default:
			v.add("rewardPerBug", false) // 19.990, 1e1, -0: a reading left open
		}
	}
	return v
}

// failBounds blames the rule of each invalid field's bounds.
func (c *check) failBounds(v verdict, why, got string) {
	if !c.sandbox {
		return
	}
	for _, f := range v.invalid {
		if id, ok := v.bounds[f]; ok {
			c.fail(id, why, fmt.Sprintf("400 VALIDATION_ERROR naming %s", f), got)
		}
	}
}

// expectValidation holds a refusal to ERR-6's VALIDATION_ERROR: 400, and
// error.details naming every invalid field and no valid one.
func (c *check) expectValidation(v verdict) {
	o := c.o
	if o.Status == http.StatusOK && len(v.invalid) == 0 {
		return
	}
	c.judge("ERR-6")
	if o.Status < 400 {
		c.fail("ERR-6", "a request the contract refuses is refused", fmt.Sprintf("400 VALIDATION_ERROR naming %s", strings.Join(v.invalid, ", ")), fmt.Sprintf("%d", o.Status))
		c.failBounds(v, "a value out of the field's bounds is refused", fmt.Sprintf("%d, the value taken", o.Status))
		return
	}
	if !c.sandbox {
		return
	}
	c.judge("ERR-6")
	if o.Status != http.StatusBadRequest || o.errorCode() != "VALIDATION_ERROR" {
		c.fail("ERR-6", "an invalid field is 400 VALIDATION_ERROR", "400 VALIDATION_ERROR naming "+strings.Join(append(v.invalid, v.maybe...), " or "), fmt.Sprintf("%d %s", o.Status, o.errorCode()))
		c.failBounds(v, "a value out of the field's bounds is 400 VALIDATION_ERROR", fmt.Sprintf("%d %s", o.Status, o.errorCode()))
		return
	}
	named := map[string]bool{}
	m, _ := o.V.(map[string]any)
	e, _ := m["error"].(map[string]any)
	details, _ := e["details"].([]any)
	for _, d := range details {
		if dm, ok := d.(map[string]any); ok {
			named[str(dm["field"])] = true
		}
	}
	for _, f := range v.invalid {
		c.judge("ERR-6")
		if !named[f] {
			c.fail("ERR-6", "error.details names every invalid field", "a detail for "+f, compactJSON(details))
		}
	}
	for f := range named {
		c.judge("ERR-6")
		if !slices.Contains(v.invalid, f) && !slices.Contains(v.maybe, f) {
			c.fail("ERR-6", "error.details names only invalid fields", "details for "+strings.Join(v.invalid, ", ")+" only", compactJSON(details))
		}
	}
}

func (c *check) createCampaign() {
	o := c.o
	b, ok := c.body()
	if !ok {
		return
	}
	v := c.validateCampaign(b)
	if !c.sandbox {
		v = verdict{maybe: append(v.invalid, v.maybe...)}
	}
	if len(v.invalid) > 0 || (o.Status != http.StatusOK && len(v.maybe) > 0) {
		c.expectValidation(v)
		return
	}
	if o.Status == http.StatusConflict && o.errorCode() == "LIMIT_REACHED" {
		c.a.complete = c.a.complete && c.exact
		return
	}
	if !c.expectSuccess("CMP-1", "a campaign within the contract's bounds") {
		return
	}
	d := o.data()
	// The reward's spelling is a rule of its own (CMP-13); any other
	// field answered otherwise than sent is a campaign created wrong.
	for _, f := range []string{"name", "platform", "testersRequired", "rewardPerBug"} {
		rule := "CMP-1"
		if f == "rewardPerBug" {
			rule = "CMP-13"
		}
		c.judge(rule)
		if diff := c.sameJSON(b[f], d[f]); diff != "" {
			c.fail(rule, "a write's answer holds exactly the values sent", f+" "+compactJSON(b[f]), compactJSON(d[f]))
		}
	}
	if c.sandbox {
		for k := range b {
			c.judge("CMP-14")
			if _, echoed := d[k]; echoed && !slices.Contains(campaignFields, k) {
				c.fail("CMP-14", "unknown fields are ignored", "no field "+k+" in the campaign", compactJSON(d))
			}
		}
		c.judge("CMP-3")
		if d["status"] != "draft" {
			c.fail("CMP-3", "a new campaign is a draft (spec §3)", `"draft"`, compactJSON(d["status"]))
		}
	}
	id := str(d["id"])
	c.newID("cmp", id)
	c.stamped("createdAt", str(d["createdAt"]))
	c.a.records[KindCampaign][id] = &record{v: copyMap(d), pinned: true}
	c.a.addEvent("campaign.created", d, c.exact)
}

// addEvent records the event a write owes; the order of events of
// overlapping writes is the server's to choose, so then it is learned.
func (a *account) addEvent(typ string, data map[string]any, exact bool) {
	a.events = append(a.events, modelEvent{typ: typ, data: copyMap(data)})
	a.eventsKnown = a.eventsKnown && exact
}

// seen compares a record as read with what the model holds, learning what
// it does not hold.
func (c *check) seen(kind recordKind, got map[string]any) {
	id := str(got["id"])
	a := c.a
	r := a.records[kind][id]
	if r == nil {
		if a.complete && c.exact {
			rule, why := "ACCT-1", "an account shows only its own records"
			if c.listing {
				rule, why = "ACCT-2", "an account's lists show only its own records"
			}
			c.judge(rule)
			c.fail(rule, why, "no "+kindInfo[kind].name+" "+id+" (the account holds none by that id)", compactJSON(got))
			return
		}
		if !a.complete {
			a.records[kind][id] = &record{v: copyMap(got), pinned: true}
		}
		return
	}
	a.pinSeed(kind, got)
	if kind == KindBug && c.sandbox {
		c.judge("BUG-5")
		if !slices.Contains(BugSeverities, str(got["severity"])) || !slices.Contains(BugStatuses, str(got["status"])) {
			c.fail("BUG-5", "a bug's severity and status are of their sets", "a severity of "+strings.Join(BugSeverities, ", ")+" and a status of "+strings.Join(BugStatuses, ", "), fmt.Sprintf("severity %s, status %s", compactJSON(got["severity"]), compactJSON(got["status"])))
		}
	}
	if kind == KindCampaign && c.sandbox && c.sameJSON(r.v["rewardPerBug"], got["rewardPerBug"]) != "" && numbersByValue(r.v["rewardPerBug"]) == numbersByValue(got["rewardPerBug"]) {
		c.judge("CMP-13")
		c.fail("CMP-13", "rewardPerBug is read back exactly as sent", compactJSON(r.v["rewardPerBug"]), compactJSON(got["rewardPerBug"]))
	}
	if kind == KindBug && !c.exact {
		r.v = copyMap(got) // others, or overlapping requests, may have changed it
		return
	}
	rule, why := "CMP-7", "a read returns what was written"
	if r.refused {
		rule, why = "BUG-18", "a refused change leaves the bug as it was"
	}
	c.judge(rule)
	if want, gotv := fieldDiff(r.v, got, c); want != "" {
		c.fail(rule, why, want, gotv)
	}
}

// fieldDiff names the first field where got differs from want.
func fieldDiff(want, got map[string]any, c *check) (string, string) {
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		w, wok := want[k]
		g, gok := got[k]
		if !c.sandbox && (!wok || !gok) {
			continue
		}
		if wok != gok || c.sameJSON(w, g) != "" {
			id := str(want["id"])
			return fmt.Sprintf("%s %s: %s", id, k, describePresent(w, wok)), describePresent(g, gok)
		}
	}
	return "", ""
}

func describePresent(v any, present bool) string {
	if !present {
		return "(absent)"
	}
	return compactJSON(v)
}

func (c *check) getCampaign(id string) {
	o := c.o
	if r := c.a.records[KindCampaign][id]; r != nil {
		c.judge("CMP-6")
		if o.Status == http.StatusNotFound && c.exact {
			c.fail("CMP-6", "a record the account holds can be read", "200 with campaign "+id, "404")
			return
		}
	} else if c.a.complete && c.exact {
		c.expectRefusal("ERR-15", "an id the account does not hold", http.StatusNotFound, "NOT_FOUND")
		return
	}
	if o.Status == http.StatusOK && o.data() != nil {
		c.seen(KindCampaign, o.data())
	}
}

// listFilters are the filters each list takes (README).
var listFilters = map[recordKind]map[string][]string{
	KindCampaign: {"status": CampaignStates, "platform": Platforms},
	KindBug:      {"campaignId": nil, "status": BugStatuses, "severity": BugSeverities, "testerId": nil},
	KindTester:   {"platform": Platforms},
	kindEvent:    {},
}

func matchesFilter(kind recordKind, rec map[string]any, name, value string) bool {
	if kind == KindTester && name == "platform" {
		ps, _ := rec["platforms"].([]any)
		for _, p := range ps {
			if p == value {
				return true
			}
		}
		return false
	}
	return str(rec[name]) == value
}

// listQuery is what a list request asks for.
type listQuery struct {
	limit   int
	filters map[string]string
	cursor  string
	// judged is set when the model knows every parameter, each given once,
	// and so which page the answer must be.
	judged bool
}

// list checks one page of a list: its shape, its items against the
// records, its order, and on an owned account that it is exactly the
// account's records (filtered) from where its cursor left off.
func (c *check) list(kind recordKind) {
	c.listing = true
	q, ok := c.listQuery(kind)
	if !ok {
		return
	}
	if c.o.Status != http.StatusOK {
		w := c.a.walks[q.cursor]
		if c.exact && q.judged && (q.cursor == "" || w != nil) {
			c.expectSuccess("LIST-1", "a list read with valid parameters")
		}
		return
	}
	items, hasMore, next, ok := c.listPage(q.limit)
	if !ok {
		return
	}
	w := c.a.walks[q.cursor]
	if q.cursor != "" && (w == nil || w.kind != kind || w.filter != filterKey(q.filters)) {
		w, q.judged = nil, false
	}
	ids := c.listItems(kind, q, w, items)
	if kind != kindEvent && c.exact && c.sandbox && q.judged && c.a.complete {
		c.listExactPage(kind, q, w, ids, hasMore)
	}
	if next != "" {
		c.a.walks[next] = nextWalk(kind, q, w, ids, items)
	}
}

// listQuery reads a list request's parameters; ok is false when one of
// them is refused, the refusal expected.
func (c *check) listQuery(kind recordKind) (q listQuery, ok bool) {
	q = listQuery{limit: defaultPageSize, filters: map[string]string{}, judged: true}
	for name, vals := range c.o.Query {
		if len(vals) != 1 {
			q.judged = false
			continue
		}
		val := vals[0]
		switch allowed, isFilter := listFilters[kind][name]; {
		case name == "limit":
			n, err := strconv.Atoi(val)
			if err != nil || !wire.IsIntegerLiteral(val) || n < 1 || n > 100 {
				if c.sandbox {
					c.expectRefusal("LIST-5", "limit must be an integer from 1 to 100", http.StatusBadRequest, "INVALID_PARAMETER")
				}
				return q, false
			}
			q.limit = n
		case name == "cursor":
			q.cursor = val
		case isFilter:
			if allowed != nil && !slices.Contains(allowed, val) {
				if c.sandbox {
					c.expectRefusal("LIST-11", "a filter value outside its set", http.StatusBadRequest, "INVALID_PARAMETER")
				}
				return q, false
			}
			q.filters[name] = val
		default:
			q.judged = false
		}
	}
	return q, true
}

// listPage checks the shape of a list's answer, {items, hasMore,
// nextCursor} with at most limit items, and returns its parts; ok is false
// when there are no items to read.
func (c *check) listPage(limit int) (items []any, hasMore bool, next string, ok bool) {
	d := c.o.data()
	if d == nil {
		return nil, false, "", false
	}
	items, ok = d["items"].([]any)
	if !ok {
		c.judge("LIST-1")
		if c.sandbox {
			c.fail("LIST-1", "a list is {items, hasMore, nextCursor}", "an array at data.items", compactJSON(d["items"]))
		}
		return nil, false, "", false
	}
	hasMore, isBool := d["hasMore"].(bool)
	next, _ = d["nextCursor"].(string)
	if c.sandbox {
		c.judge("LIST-1")
		cursor, present := d["nextCursor"]
		if _, isString := cursor.(string); !isBool || !present || (cursor != nil && !isString) {
			c.fail("LIST-1", "a list is {items, hasMore, nextCursor}", "hasMore a boolean and nextCursor a string or null", fmt.Sprintf("hasMore %s, nextCursor %s", describePresent(d["hasMore"], d["hasMore"] != nil), describePresent(cursor, present)))
		}
	}
	c.judge("LIST-7")
	if c.sandbox && d["nextCursor"] == "" {
		c.fail("LIST-7", "on the last page nextCursor is null", "null", `""`)
	}
	if c.sandbox && (hasMore != (next != "")) {
		c.fail("LIST-7", "hasMore is true exactly when nextCursor is set", "hasMore and nextCursor that agree", fmt.Sprintf("hasMore %v, nextCursor %s", d["hasMore"], compactJSON(d["nextCursor"])))
	}
	c.judge("LIST-4")
	if len(items) > limit {
		c.fail("LIST-4", "a page holds at most limit items", fmt.Sprintf("at most %d items", limit), strconv.Itoa(len(items)))
	}
	return items, hasMore, next, true
}

// listItems checks each item of a page on its own: never one the walk w
// (nil when the page starts none the model knows) gave before, matching
// the filters, newest first; it learns the records listed and returns
// their ids.
func (c *check) listItems(kind recordKind, q listQuery, w *pageWalk, items []any) []string {
	var ids []string
	var prev map[string]any
	for _, it := range items {
		rec, ok := it.(map[string]any)
		if !ok {
			continue
		}
		ids = append(ids, str(rec["id"]))
		if w != nil {
			c.judge("LIST-8")
		}
		if w != nil && w.seen[str(rec["id"])] {
			c.fail("LIST-8", "a list's pages never repeat an item", "each item once across the pages", str(rec["id"])+" again")
		}
		if c.sandbox {
			filterRule := "LIST-10"
			if len(q.filters) > 1 {
				filterRule = "LIST-13"
			}
			for name, val := range q.filters {
				c.judge(filterRule)
				if !matchesFilter(kind, rec, name, val) {
					c.fail(filterRule, "a filtered list holds only matching items", name+" "+val, compactJSON(rec))
				}
			}
			if prev != nil {
				c.judge("LIST-2")
			}
			if prev != nil && newerFirstBroken(prev, rec) {
				c.fail("LIST-2", "lists are newest first", str(prev["id"])+" after "+str(rec["id"]), str(rec["id"])+" after "+str(prev["id"]))
			}
		}
		prev = rec
		if kind != kindEvent {
			c.seen(kind, rec)
		}
	}
	return ids
}

// listExactPage holds a page of an account the model knows whole to being
// exactly its records, filtered, newest first, from right after the last
// item of the page before, with hasMore saying whether more follow.
func (c *check) listExactPage(kind recordKind, q listQuery, w *pageWalk, ids []string, hasMore bool) {
	want := c.a.ordered(kind, func(r map[string]any) bool {
		for name, val := range q.filters {
			if !matchesFilter(kind, r, name, val) {
				return false
			}
		}
		return true
	})
	start := 0
	if w != nil && w.after != nil {
		for start < len(want) && !newerFirstBroken(want[start], w.after) {
			start++
		}
	}
	var wantIDs []string
	for i := start; i < len(want) && i < start+q.limit; i++ {
		wantIDs = append(wantIDs, str(want[i]["id"]))
	}
	page := "LIST-2"
	c.judge(page)
	switch len(q.filters) {
	case 0:
	case 1:
		page = "LIST-10"
		c.judge(page)
	default:
		page = "LIST-13"
		c.judge("LIST-10", page)
	}
	if start > 0 {
		page = "LIST-9"
		c.judge(page)
	}
	if strings.Join(wantIDs, ",") != strings.Join(ids, ",") {
		if page == "LIST-2" && !sameSet(wantIDs, ids) && kindInfo[kind].listRule != "" {
			// Not the order but the records themselves: the list does
			// not answer the account's records.
			page = kindInfo[kind].listRule
			c.judge(page)
		}
		c.fail(page, "a list page is the account's records, filtered, newest first, from right after the last item of the page before", "["+strings.Join(wantIDs, ", ")+"]", "["+strings.Join(ids, ", ")+"]")
	}
	c.judge("LIST-7")
	if wantMore := start+q.limit < len(want); wantMore != hasMore {
		c.fail("LIST-7", "hasMore says whether more items follow", fmt.Sprintf("hasMore %v (%d items after the cursor)", wantMore, len(want)-start), fmt.Sprintf("%v", hasMore))
	}
}

// nextWalk is the walk a page's nextCursor continues: the items of the
// walk so far, w's (nil if none) and this page's.
func nextWalk(kind recordKind, q listQuery, w *pageWalk, ids []string, items []any) *pageWalk {
	nw := &pageWalk{kind: kind, filter: filterKey(q.filters), seen: map[string]bool{}}
	if n := len(items); n > 0 {
		nw.after, _ = items[n-1].(map[string]any)
	}
	if w != nil {
		for id := range w.seen {
			nw.seen[id] = true
		}
	}
	for _, id := range ids {
		nw.seen[id] = true
	}
	return nw
}

// sameSet says whether two lists of IDs hold the same IDs, in any order.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	as, bs := slices.Clone(a), slices.Clone(b)
	slices.Sort(as)
	slices.Sort(bs)
	return slices.Equal(as, bs)
}

func filterKey(f map[string]string) string {
	var parts []string
	for k, v := range f {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, "&")
}

// newerFirstBroken says whether b, listed after a, is newer than a.
func newerFirstBroken(a, b map[string]any) bool {
	ta, err1 := wire.ParseTimestamp(str(a["createdAt"]))
	tb, err2 := wire.ParseTimestamp(str(b["createdAt"]))
	if err1 != nil || err2 != nil {
		return false
	}
	if !ta.Equal(tb) {
		return tb.After(ta)
	}
	_, na, _, ok1 := parseID(str(a["id"]))
	_, nb, _, ok2 := parseID(str(b["id"]))
	return ok1 && ok2 && nb > na
}

// lifecycleRule is the rule of the lifecycle table that says where a bug
// may move from status.
func lifecycleRule(status string) string {
	switch status {
	case "new":
		return "BUG-8"
	case "confirmed":
		return "BUG-9"
	case "in_progress":
		return "BUG-10"
	case "resolved":
		return "BUG-11"
	}
	return "BUG-12"
}

// patchBug holds a bug change to the lifecycle table (BUG-8 to BUG-18).
func (c *check) patchBug(id string) {
	o := c.o
	b, ok := c.body()
	if !ok {
		return
	}
	a := c.a
	r := a.records[KindBug][id]
	v := validateBugPatch(b)
	if r == nil {
		c.patchUnknownBug(id, v)
		return
	}
	if o.Status == http.StatusOK && o.data() != nil {
		a.pinSeed(KindBug, o.data())
	}
	if !c.exact || !c.sandbox {
		if o.Status == http.StatusOK && o.data() != nil {
			if c.sandbox || a.owned {
				r.v = copyMap(o.data())
			}
			a.eventsKnown = a.eventsKnown && c.exact
		}
		return
	}
	if len(v.invalid) > 0 {
		c.expectValidation(v)
		return
	}
	// A change refused as a move must leave the bug as it was (BUG-18);
	// one carried out ends that. Any other answer tells nothing of it.
	switch o.Status {
	case http.StatusOK:
		r.refused = false
	case http.StatusConflict:
		r.refused = true
	}
	cur := str(r.v["status"])
	to, newRes, moved, ok := c.bugMove(r, b)
	if !ok || !c.expectSuccess(moved, "the move "+cur+" → "+to) {
		return
	}
	want := copyMap(r.v)
	want["status"], want["resolution"] = to, newRes
	got := o.data()
	want["updatedAt"] = got["updatedAt"]
	c.judge("BUG-3")
	if w, g := fieldDiff(want, got, c); w != "" {
		c.fail("BUG-3", "a bug change answers the bug as changed, and only that", w, g)
	}
	c.stamped("updatedAt", str(got["updatedAt"]))
	r.v = copyMap(got)
	a.addEvent("bug.updated", got, c.exact)
}

// patchUnknownBug holds a change to a bug the model does not hold, of
// which v is the validation: an account the model knows whole must refuse
// it (ERR-15); on any other the answer teaches the model the bug.
func (c *check) patchUnknownBug(id string, v verdict) {
	o := c.o
	switch {
	case !c.a.complete || !c.exact:
		if o.Status == http.StatusOK && o.data() != nil {
			c.a.records[KindBug][id] = &record{v: copyMap(o.data()), pinned: true}
		}
	case len(v.invalid) > 0:
		// Which of the two faults is reported first is left open.
		c.expectRefusal("ERR-15", "an invalid change to an id the account does not hold", 0)
	default:
		c.expectRefusal("ERR-15", "an id the account does not hold", http.StatusNotFound, "NOT_FOUND")
	}
}

// bugMove reads the valid change b to bug r against the lifecycle table:
// the status and resolution it leads to and the rule of the move, with ok
// set when the move must succeed. A move the table refuses, a change to
// nothing and one whose outcome is left open are judged here, ok unset.
func (c *check) bugMove(r *record, b map[string]any) (to string, newRes any, moved string, ok bool) {
	o := c.o
	st, hasSt := b["status"]
	res, hasRes := b["resolution"]
	cur := str(r.v["status"])
	curRes := r.v["resolution"]
	to, _ = st.(string)
	newRes = curRes
	switch {
	case hasSt && to == cur && !hasRes:
		if c.expectSuccess("BUG-20", "sending the status a bug already has") {
			c.judge("BUG-20")
			if w, g := fieldDiff(r.v, o.data(), c); w != "" {
				c.fail("BUG-20", "sending the status a bug already has changes nothing", w, g)
			}
		}
		return "", nil, "", false
	case hasSt && to == cur, !hasSt && (cur == "resolved" || cur == "closed") && res == curRes:
		// A change to nothing with a resolution along: whether it counts
		// as a change is left open.
		if o.Status == http.StatusOK && o.data() != nil {
			r.v = copyMap(o.data())
			c.a.eventsKnown = false
		}
		return "", nil, "", false
	case !hasSt:
		if cur != "resolved" && cur != "closed" {
			c.expectRefusal("BUG-16", "a resolution on a bug that stays open", http.StatusConflict, "INVALID_STATUS_TRANSITION")
			return "", nil, "", false
		}
		return cur, res, "BUG-17", true
	case !slices.Contains(bugTransitions[cur], to):
		c.judge("BUG-18")
		c.expectRefusal(lifecycleRule(cur), "the move "+cur+" → "+to+" is not in the lifecycle table", http.StatusConflict, "INVALID_STATUS_TRANSITION")
		return "", nil, "", false
	case to == "resolved" || to == "closed":
		if hasRes {
			newRes = res
		}
		if newRes == nil {
			c.expectRefusal("BUG-14", "a move to "+to+" needs a resolution", http.StatusConflict, "INVALID_STATUS_TRANSITION")
			return "", nil, "", false
		}
	default:
		if hasRes {
			c.expectRefusal("BUG-15", "a resolution sent with a move that leaves the bug open", http.StatusConflict, "INVALID_STATUS_TRANSITION")
			return "", nil, "", false
		}
		newRes = nil // reopening clears it
	}
	return to, newRes, lifecycleRule(cur), true
}

// validateBugPatch: status and resolution, at least one, each from its set.
func validateBugPatch(b map[string]any) verdict {
	v := verdict{bounds: map[string]string{"status": "BUG-19", "resolution": "BUG-19"}}
	st, hasSt := b["status"]
	res, hasRes := b["resolution"]
	if !hasSt && !hasRes {
		v.add("status", true)
		v.add("resolution", false)
	}
	if s, ok := st.(string); hasSt && (!ok || !slices.Contains(BugStatuses, s)) {
		v.add("status", true)
	}
	if s, ok := res.(string); hasRes && (!ok || !slices.Contains(bugResolutions, s)) {
		v.add("resolution", true)
	}
	return v
}

// analytics holds GET /v1/analytics to the records (README): counts of the
// account's campaigns and bugs, every status and severity present.
func (c *check) analytics() {
	o := c.o
	a := c.a
	if !c.sandbox || !c.exact || !a.complete {
		return
	}
	campaign := ""
	for name, vals := range o.Query {
		if name != "campaignId" || len(vals) != 1 {
			return
		}
		campaign = vals[0]
	}
	if campaign != "" && a.records[KindCampaign][campaign] == nil {
		c.expectRefusal("ANL-4", "analytics of a campaign the account does not hold", http.StatusNotFound, "NOT_FOUND")
		return
	}
	if !c.expectSuccess("ANL-1", "analytics") {
		return
	}
	byStatus, bySeverity := map[string]any{}, map[string]any{}
	for _, s := range BugStatuses {
		byStatus[s] = json.Number("0")
	}
	for _, s := range BugSeverities {
		bySeverity[s] = json.Number("0")
	}
	total := 0
	for _, r := range a.records[KindBug] {
		if campaign != "" && str(r.v["campaignId"]) != campaign {
			continue
		}
		total++
		inc(byStatus, str(r.v["status"]))
		inc(bySeverity, str(r.v["severity"]))
	}
	campaigns := len(a.records[KindCampaign])
	if campaign != "" {
		campaigns = 1
	}
	want := map[string]any{
		"campaigns": json.Number(strconv.Itoa(campaigns)),
		"bugs":      map[string]any{"total": json.Number(strconv.Itoa(total)), "byStatus": byStatus, "bySeverity": bySeverity},
	}
	got := map[string]any{"campaigns": o.data()["campaigns"], "bugs": o.data()["bugs"]}
	gotBugs, _ := got["bugs"].(map[string]any)
	for by, set := range map[string][]string{"byStatus": BugStatuses, "bySeverity": BugSeverities} {
		counts, _ := gotBugs[by].(map[string]any)
		for _, k := range set {
			c.judge("ANL-2")
			if _, ok := counts[k]; !ok {
				c.fail("ANL-2", "analytics count every status and severity, zero or not", "bugs."+by+"."+k, "(absent)")
			}
		}
	}
	c.judge("ANL-3")
	if w, g := fieldDiff(want, got, c); w != "" {
		c.fail("ANL-3", "analytics are counted from the account's records", "analytics"+strings.TrimPrefix(w, " "), g)
	}
}

func inc(m map[string]any, k string) {
	n, _ := strconv.Atoi(fmt.Sprint(m[k]))
	m[k] = json.Number(strconv.Itoa(n + 1))
}

// createWebhook holds POST /v1/webhooks to WH-1 to WH-6: url and events as
// sent (repeats once), a whsec_ secret, active, at most 16 an account.
func (c *check) createWebhook() {
	o := c.o
	b, ok := c.body()
	if !ok || !c.sandbox {
		return
	}
	var v verdict
	raw, isStr := b["url"].(string)
	u, err := url.Parse(raw)
	switch {
	case !isStr || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		v.add("url", true)
	default:
		v.add("url", false) // an egress policy may refuse a destination
	}
	evs, isArr := b["events"].([]any)
	if !isArr || len(evs) == 0 {
		v.add("events", true)
	}
	var want []string
	for _, e := range evs {
		s, ok := e.(string)
		if !ok || !slices.Contains(webhookEvents, s) {
			v.add("events", true)
			break
		}
		if !slices.Contains(want, s) {
			want = append(want, s)
		}
	}
	if len(v.invalid) > 0 || (o.Status == http.StatusBadRequest && o.errorCode() == "VALIDATION_ERROR") {
		c.expectValidation(v)
		return
	}
	a := c.a
	if c.exact && a.webhooksKnown && len(a.webhooks) >= maxWebhooks {
		c.expectRefusal("WH-6", "the 17th webhook of an account", http.StatusConflict, "LIMIT_REACHED")
		return
	}
	if !c.expectSuccess("WH-1", "a webhook with a valid url and events") {
		return
	}
	d := o.data()
	c.judge("WH-5")
	if d["url"] != raw {
		c.fail("WH-5", "a write's answer holds exactly the values sent", "url "+compactJSON(raw), compactJSON(d["url"]))
	}
	var got []string
	gotArr, _ := d["events"].([]any)
	for _, e := range gotArr {
		got = append(got, str(e))
	}
	sortedWant, sortedGot := append([]string(nil), want...), append([]string(nil), got...)
	sort.Strings(sortedWant)
	sort.Strings(sortedGot)
	c.judge("WH-4")
	if strings.Join(sortedWant, ",") != strings.Join(sortedGot, ",") {
		c.fail("WH-4", "a webhook keeps the events sent, each once", compactJSON(want), compactJSON(d["events"]))
	}
	c.judge("WH-5")
	if !strings.HasPrefix(str(d["secret"]), "whsec_") || d["status"] != "active" {
		c.fail("WH-5", "a webhook answers a whsec_ secret and status active", `secret "whsec_…", status "active"`, compactJSON(map[string]any{"secret": wire.Truncate(str(d["secret"]), 10), "status": d["status"]}))
	}
	id := str(d["id"])
	c.newID("whk", id)
	c.stamped("createdAt", str(d["createdAt"]))
	if a.webhooks == nil {
		// An account the run did not start from fresh, such as the
		// operator's key, holds webhooks the model never saw.
		a.webhooks = map[string]map[string]any{}
	}
	a.webhooks[id] = copyMap(d)
}
