package explore

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/testcampaign/kit/conformance/internal/model"
)

// generator makes one random sequence: valid requests, requests invalid in
// exactly one field, edge values, several keys interleaved, bursts, resets,
// faults and clock moves, and after each refused write the reads that
// would show whether it changed something anyway.
type generator struct {
	rng   *rand.Rand
	x     *explorer
	steps []xstep
	key   int
	keys  int
	// names saved so far, per key: campaigns and bugs made, cursors.
	campaigns, bugs map[int][]string
	cursors         map[int][]string
	n               int // counter for saved names
	seedCampaigns   []string
	seedBugs        []string
	seedTesters     []string
}

func newGenerator(rng *rand.Rand, x *explorer) *generator {
	g := &generator{rng: rng, x: x, keys: 1, campaigns: map[int][]string{}, bugs: map[int][]string{}, cursors: map[int][]string{}}
	if seed := x.t.Model.Seed(); seed != nil {
		g.seedCampaigns = sortedIDs(seed.Records[model.KindCampaign])
		g.seedBugs = sortedIDs(seed.Records[model.KindBug])
		g.seedTesters = sortedIDs(seed.Records[model.KindTester])
	}
	return g
}

func sortedIDs(m map[string]map[string]any) []string {
	var out []string
	for id := range m {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func (g *generator) pick(list []string) string { return list[g.rng.IntN(len(list))] }

func (g *generator) chance(p float64) bool { return g.rng.Float64() < p }

func (g *generator) name(prefix string) string {
	g.n++
	return fmt.Sprintf("%s%d", prefix, g.n)
}

func (g *generator) add(s xstep) {
	s.key = g.key
	g.steps = append(g.steps, s)
}

// sequence makes n steps. Every sequence starts by asking whether the clock
// is frozen, so the model knows how to read the server's clock.
func (g *generator) sequence(n int) []xstep {
	g.add(xstep{method: "POST", path: "/_sandbox/clock", body: `{"advance":"1s"}`, contentType: "application/json"})
	actions := []struct {
		weight int
		do     func()
	}{
		{14, g.createCampaign},
		{9, g.invalidCampaign},
		{6, g.readCampaign},
		{10, g.readList},
		{6, g.walkList},
		{10, g.patchBug},
		{6, g.fileBug},
		{4, g.analytics},
		{4, g.webhook},
		{3, g.controlsRead},
		{2, g.reset},
		{2, g.fault},
		{2, g.moveClock},
		{3, g.head},
		{2, g.burst},
		{3, g.switchKey},
		{2, g.bodyForms},
	}
	total := 0
	for _, a := range actions {
		total += a.weight
	}
	for len(g.steps) < n {
		r := g.rng.IntN(total)
		for _, a := range actions {
			if r < a.weight {
				a.do()
				break
			}
			r -= a.weight
		}
	}
	return g.steps
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// edge texts: multibyte, escapes, the bounds of a name.
var texts = []string{"Launch", "Émile's café ☕", "名前テスト", "emoji 🚀 x", "tab\tquote\" back\\slash", "  padded  ", "<b>&amp;</b>", "x"}

// reward and tester counts in their accepted forms and at their bounds.
var (
	rewards = []string{"0", "19.99", "7.50", "100000", "0.01", "99999.99", "5", "12.3", "19.990", "1e1", "-0", "1.0E2"}
	counts  = []string{"1", "10000", "5", "250", "1e1"}
)

func (g *generator) campaignBody(overrides map[string]string) string {
	fields := map[string]string{
		"name":            jsonText(g.pick(texts) + " " + fmt.Sprint(g.rng.IntN(1000))),
		"platform":        jsonText(g.pick(model.Platforms)),
		"testersRequired": g.pick(counts),
		"rewardPerBug":    g.pick(rewards),
	}
	if g.chance(0.05) {
		fields["name"] = jsonText(strings.Repeat("é", 200))
	}
	for k, v := range overrides {
		fields[k] = v
	}
	keys := []string{"name", "platform", "testersRequired", "rewardPerBug"}
	for k := range overrides {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	var parts []string
	for _, k := range keys {
		if v, ok := fields[k]; ok && v != "" {
			parts = append(parts, jsonText(k)+": "+v)
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (g *generator) createCampaign() {
	name := g.name("c")
	var extra map[string]string
	if g.chance(0.15) {
		extra = map[string]string{"colour": `"blue"`}
	}
	g.add(xstep{method: "POST", path: "/v1/campaigns", body: g.campaignBody(extra), contentType: "application/json", saveAt: "data.id", saveAs: name})
	g.campaigns[g.key] = append(g.campaigns[g.key], name)
	if g.chance(0.5) {
		g.add(xstep{method: "GET", path: "/v1/campaigns/{" + name + "}"})
	}
}

// invalidCampaign breaks exactly one field, then reads what the refusal
// must not have touched.
func (g *generator) invalidCampaign() {
	breaks := []map[string]string{
		{"name": `""`}, {"name": jsonText(strings.Repeat("n", 201))}, {"name": `"   "`}, {"name": "42"}, {"name": ""},
		{"platform": `"symbian"`}, {"platform": `"IOS"`}, {"platform": ""},
		{"testersRequired": "0"}, {"testersRequired": "10001"}, {"testersRequired": "10.0"}, {"testersRequired": `"5"`}, {"testersRequired": "-1"}, {"testersRequired": ""},
		{"rewardPerBug": "-0.01"}, {"rewardPerBug": "100000.01"}, {"rewardPerBug": "1.234"}, {"rewardPerBug": `"10"`}, {"rewardPerBug": ""},
	}
	if g.x.t.Model.Switches.LongNumbers {
		breaks = append(breaks, map[string]string{"rewardPerBug": "1." + strings.Repeat("0", 40)})
	}
	g.add(xstep{method: "POST", path: "/v1/campaigns", body: g.campaignBody(breaks[g.rng.IntN(len(breaks))]), contentType: "application/json"})
	g.reread()
}

// bodyForms sends a campaign in the forms a body can take: content-type
// parameters, another media type, malformed JSON, an array, a duplicated
// field.
func (g *generator) bodyForms() {
	body := g.campaignBody(nil)
	forms := []xstep{
		{method: "POST", path: "/v1/campaigns", body: body, contentType: "application/json; charset=utf-8"},
		{method: "POST", path: "/v1/campaigns", body: body, contentType: "text/plain"},
		{method: "POST", path: "/v1/campaigns", body: body[:len(body)-1], contentType: "application/json"},
		{method: "POST", path: "/v1/campaigns", body: "[" + body + "]", contentType: "application/json"},
		{method: "POST", path: "/v1/campaigns", body: body + " {}", contentType: "application/json"},
	}
	if g.x.t.Model.Switches.DuplicateFields {
		forms = append(forms, xstep{method: "POST", path: "/v1/campaigns", body: strings.Replace(body, "{", `{"platform": "web", `, 1), contentType: "application/json"})
	}
	g.add(forms[g.rng.IntN(len(forms))])
	g.reread()
}

// reread reads what a refused write might have touched, and the journal
// that must hold it.
func (g *generator) reread() {
	for _, p := range []string{"/v1/campaigns?limit=100", "/v1/analytics", "/_sandbox/events", "/v1/bugs?limit=100", "/_sandbox/requests"} {
		if g.chance(0.5) {
			g.add(xstep{method: "GET", path: p})
		}
	}
}

func (g *generator) campaignRef() string {
	mine := g.campaigns[g.key]
	switch r := g.rng.IntN(10); {
	case r < 5 && len(mine) > 0:
		return "{" + g.pick(mine) + "}"
	case r < 8 && len(g.seedCampaigns) > 0:
		return g.pick(g.seedCampaigns)
	case r < 9:
		// Another key's campaign: isolation.
		for k, list := range g.campaigns {
			if k != g.key && len(list) > 0 {
				return "{" + g.pick(list) + "}"
			}
		}
	}
	return "cmp_999999"
}

func (g *generator) bugRef() string {
	mine := g.bugs[g.key]
	switch r := g.rng.IntN(10); {
	case r < 5 && len(mine) > 0:
		return "{" + g.pick(mine) + "}"
	case r < 9 && len(g.seedBugs) > 0:
		return g.pick(g.seedBugs)
	}
	return "bug_999999"
}

func (g *generator) readCampaign() {
	g.add(xstep{method: "GET", path: "/v1/campaigns/" + g.campaignRef()})
}

var listPaths = []string{"/v1/campaigns", "/v1/bugs", "/v1/testers", "/_sandbox/events"}

func (g *generator) listQuery(path string) string {
	var q []string
	if g.chance(0.6) {
		limits := []string{"1", "2", "3", "100", "20", "7"}
		if g.chance(0.15) {
			limits = []string{"0", "101", "-1", "2.5", "abc"}
		}
		q = append(q, "limit="+g.pick(limits))
	}
	if g.chance(0.5) {
		switch path {
		case "/v1/campaigns":
			if g.chance(0.5) {
				q = append(q, "platform="+g.pick(append(model.Platforms, "symbian")))
			} else {
				q = append(q, "status="+g.pick(append(model.CampaignStates, "paused")))
			}
		case "/v1/bugs":
			switch g.rng.IntN(4) {
			case 0:
				q = append(q, "status="+g.pick(append(model.BugStatuses, "open")))
			case 1:
				q = append(q, "severity="+g.pick(append(model.BugSeverities, "urgent")))
			case 2:
				q = append(q, "campaignId="+g.campaignRef())
			default:
				if len(g.seedTesters) > 0 {
					q = append(q, "testerId="+g.pick(g.seedTesters))
				}
			}
		case "/v1/testers":
			q = append(q, "platform="+g.pick(model.Platforms))
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + strings.Join(q, "&")
}

func (g *generator) readList() {
	g.add(xstep{method: "GET", path: g.listQuery(g.pick(listPaths))})
}

// walkList reads a list page by page, following nextCursor.
func (g *generator) walkList() {
	path := g.pick(listPaths[:3])
	q := g.listQuery(path)
	sep := "?"
	if strings.Contains(q, "?") {
		sep = "&"
	}
	if !strings.Contains(q, "limit=") {
		q += sep + "limit=" + fmt.Sprint(1+g.rng.IntN(3))
		sep = "&"
	}
	cur := g.name("k")
	g.add(xstep{method: "GET", path: q, saveAt: "data.nextCursor", saveAs: cur})
	for i := 0; i < 1+g.rng.IntN(4); i++ {
		next := g.name("k")
		g.add(xstep{method: "GET", path: q + sep + "cursor={" + cur + "}", saveAt: "data.nextCursor", saveAs: next})
		cur = next
	}
}

func (g *generator) patchBug() {
	bodies := []string{
		`{"status":"confirmed"}`, `{"status":"in_progress"}`, `{"status":"resolved","resolution":"fixed"}`, `{"status":"resolved"}`,
		`{"status":"closed","resolution":"wont_fix"}`, `{"status":"closed"}`, `{"resolution":"duplicate"}`, `{"status":"new"}`,
		`{"status":"confirmed","resolution":"fixed"}`, `{"status":"reopened"}`, `{"resolution":"maybe"}`, `{}`,
		`{"status":"closed","resolution":"not_a_bug"}`, `{"resolution":"cannot_reproduce"}`,
	}
	body := g.pick(bodies)
	g.add(xstep{method: "PATCH", path: "/v1/bugs/" + g.bugRef(), body: body, contentType: "application/json"})
	if g.chance(0.5) {
		g.add(xstep{method: "GET", path: "/v1/bugs?limit=100"})
	}
}

func (g *generator) fileBug() {
	name := g.name("b")
	fields := []string{`"campaignId": "` + g.campaignRef() + `"`, `"title": ` + jsonText(g.pick(texts)), `"severity": "` + g.pick(model.BugSeverities) + `"`}
	if g.chance(0.3) {
		fields = append(fields, `"description": `+jsonText(g.pick(texts)))
	}
	if g.chance(0.3) && len(g.seedTesters) > 0 {
		fields = append(fields, `"testerId": "`+g.pick(g.seedTesters)+`"`)
	}
	if g.chance(0.1) {
		fields[2] = `"severity": "blocker"`
	}
	g.add(xstep{method: "POST", path: "/_sandbox/bugs", body: "{" + strings.Join(fields, ", ") + "}", contentType: "application/json", saveAt: "data.id", saveAs: name})
	g.bugs[g.key] = append(g.bugs[g.key], name)
}

func (g *generator) analytics() {
	p := "/v1/analytics"
	if g.chance(0.5) {
		p += "?campaignId=" + g.campaignRef()
	}
	g.add(xstep{method: "GET", path: p})
}

func (g *generator) webhook() {
	events := []string{"campaign.created", "bug.created", "bug.updated", "*"}
	var chosen []string
	for i := 0; i < 1+g.rng.IntN(3); i++ {
		chosen = append(chosen, g.pick(events))
	}
	body := map[string]any{"url": fmt.Sprintf("http://127.0.0.1:9/conform-explorer-%d", g.rng.IntN(100)), "events": chosen}
	switch g.rng.IntN(8) {
	case 0:
		body["events"] = []string{}
	case 1:
		body["url"] = "ftp://example.com/hook"
	case 2:
		body["events"] = []string{"campaign.deleted"}
	}
	g.add(xstep{method: "POST", path: "/v1/webhooks", body: jsonText(body), contentType: "application/json"})
}

func (g *generator) controlsRead() {
	g.add(xstep{method: "GET", path: g.pick([]string{
		"/_sandbox/events", "/_sandbox/requests", "/_sandbox/deliveries", "/_sandbox/faults",
		"/_sandbox/requests?method=GET", "/_sandbox/requests?method=POST&path=/v1/campaigns",
		"/_sandbox/requests?path=/v1/bugs*", "/_sandbox/requests?method=get",
	})})
}

func (g *generator) reset() {
	g.add(xstep{method: "POST", path: "/_sandbox/reset"})
	g.campaigns[g.key], g.bugs[g.key] = nil, nil
	g.readList()
}

// faultTargets are the method and path a fault may be limited to, the
// empty ones matching every /v1 request (FAULT-5..FAULT-7).
var faultTargets = []struct{ method, path string }{
	{"", ""}, {"POST", "/v1/campaigns"}, {"GET", "/v1/campaigns"}, {"GET", "/v1/bugs*"}, {"", "/v1/campaigns*"}, {"PATCH", ""},
}

// fault plans one or two faults, of a status, a delay or a dropped
// connection, for some or every request, by count or by rate, then sends
// what they may hit, and sometimes lists or clears the plan.
func (g *generator) fault() {
	planned := 1 + g.rng.IntN(2)
	for range planned {
		f := map[string]any{}
		target := faultTargets[g.rng.IntN(len(faultTargets))]
		if target.method != "" {
			f["method"] = target.method
		}
		if target.path != "" {
			f["path"] = target.path
		}
		switch r := g.rng.Float64(); {
		case r < 0.7:
			f["status"] = []int{500, 503, 429}[g.rng.IntN(3)]
			if g.chance(0.3) {
				f["retryAfter"] = 1 + g.rng.IntN(30)
			}
		case r < 0.85:
			f["delayMs"] = 1 + g.rng.IntN(5)
		default:
			f["network"] = g.pick([]string{"reset", "close"})
		}
		if g.chance(0.3) {
			f["rate"], f["seed"] = 0.5, g.rng.IntN(1000)
		}
		if _, rated := f["rate"]; !rated || g.chance(0.5) {
			f["count"] = 1 + g.rng.IntN(2)
		}
		g.add(xstep{method: "POST", path: "/_sandbox/faults", body: jsonText(f), contentType: "application/json"})
	}
	for range 1 + g.rng.IntN(3) {
		switch r := g.rng.Float64(); {
		case r < 0.4:
			g.createCampaign()
		case r < 0.7:
			g.readList()
		default:
			g.patchBug()
		}
	}
	if g.chance(0.5) {
		g.add(xstep{method: "GET", path: "/_sandbox/faults"})
	}
	// A fault left planned would hit the rest of the sequence.
	g.add(xstep{method: "DELETE", path: "/_sandbox/faults"})
	g.reread()
}

func (g *generator) moveClock() {
	g.add(xstep{method: "POST", path: "/_sandbox/clock", body: fmt.Sprintf(`{"advance":"%s"}`, g.pick([]string{"30s", "61s", "90s", "1h", "25h"})), contentType: "application/json"})
	g.readList()
}

func (g *generator) head() {
	g.add(xstep{method: "HEAD", path: g.pick(listPaths[:3])})
}

// burst sends the same request several times at once: the model then
// checks only what order cannot change.
func (g *generator) burst() {
	if g.chance(0.5) {
		g.add(xstep{method: "POST", path: "/v1/campaigns", body: g.campaignBody(nil), contentType: "application/json", burst: 2 + g.rng.IntN(4)})
	} else {
		g.add(xstep{method: "GET", path: g.listQuery(g.pick(listPaths[:3])), burst: 2 + g.rng.IntN(4)})
	}
	g.add(xstep{method: "GET", path: "/v1/campaigns?limit=100"})
}

func (g *generator) switchKey() {
	if g.keys < 3 && g.chance(0.5) {
		g.keys++
	}
	g.key = g.rng.IntN(g.keys)
}
