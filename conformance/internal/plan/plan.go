// Package plan reads feature files (the built-in suite and the operator's),
// parsing each once, lints them against the step library before any
// request, and plans which scenarios a run takes and why it leaves the
// others out; each planned scenario carries the fingerprint that joins
// godog's pickle of it to the plan.
package plan

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	gherkin "github.com/cucumber/gherkin/go/v26"
	messages "github.com/cucumber/messages/go/v21"

	"github.com/testcampaign/kit/conformance/internal/steps"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/docs"
	"github.com/testcampaign/kit/features"
)

// Tags with a meaning to the runner.
const (
	tagWrites = "@writes"
	// tagExhaustive is also the tag by which a scenario runs alone.
	tagExhaustive = steps.TagExhaustive
	// tagSandbox is also the tag the sandbox's control steps need.
	tagSandbox  = steps.TagSandbox
	tagSeed     = "@seed"
	tagDelivery = "@delivery"
	// A scenario that moves the account's clock, or reads the instant it
	// is frozen at, needs a sandbox started with -frozen-clock; one that
	// checks what a running clock refuses needs one started without it.
	tagFrozenClock  = steps.TagFrozenClock
	tagRunningClock = "@running-clock"
	// Maturity: how settled the behaviour a scenario checks is.
	tagStable = "@stable"
	tagBeta   = "@beta"
)

// PlanOptions are the parts of a run's configuration that decide which
// features load and which of their scenarios run.
type PlanOptions struct {
	Tags          string
	Profile       string
	FeatureDirs   []string
	NoBuiltin     bool
	APIKey        string
	AllowWrites   bool
	Exhaustive    bool
	WebhookListen string
}

// RunEnv is what the run learnt about the deployment before planning.
type RunEnv struct {
	Seeded bool // a fresh sandbox account holds the built-in seed
	// NoReceiver says why conform's webhook receiver cannot take
	// deliveries from the deployment; empty when it can.
	NoReceiver string
	// Clock is how a fresh sandbox account's clock behaves: ClockFrozen,
	// ClockRunning, or "" when the run could not tell.
	Clock string
}

// The clocks a sandbox account may have (RunEnv.Clock).
const (
	ClockFrozen  = "frozen"
	ClockRunning = "running"
)

// FeatureFile is one .feature file of a run, built in or the operator's,
// as the plan reads and godog runs it. It is parsed once, when it is read:
// the plan, the lint and the runner's join of godog's results all read the
// same document and pickles.
type FeatureFile struct {
	URI     string
	content []byte
	builtin bool
	// lines, when set, are the only scenarios of the file to run: the line
	// of a Scenario (or Scenario Outline), or of one row of its Examples.
	lines map[int]bool
	// doc and pickles are the file parsed; parseErr says why it could not
	// be, for the plan to refuse and the lint to report.
	doc      *messages.GherkinDocument
	pickles  []*messages.Pickle
	parseErr error
}

// readFeature reads and parses the feature at name in fsys, to be known by
// uri: the one parse of the file in the run.
func readFeature(fsys fs.FS, name, uri string, newID func() string) (FeatureFile, error) {
	r, err := fsys.Open(name)
	if err != nil {
		return FeatureFile{}, err
	}
	defer r.Close()
	f := FeatureFile{URI: uri}
	var text bytes.Buffer
	doc, err := gherkin.ParseGherkinDocument(io.TeeReader(r, &text), newID)
	if err != nil {
		// The parser stops at the first error; the rest is still the file.
		if _, rerr := io.Copy(&text, r); rerr != nil {
			return FeatureFile{}, rerr
		}
		f.content, f.parseErr = text.Bytes(), err
		return f, nil
	}
	doc.Uri = uri
	f.content, f.doc = text.Bytes(), doc
	f.pickles = gherkin.Pickles(*doc, uri, newID)
	return f, nil
}

// builtinSuite is the embedded suite, read and parsed once per process: it
// never changes, and the runs of one process only read it.
var builtinSuite = sync.OnceValues(func() ([]FeatureFile, error) {
	files, err := readFeatures(features.FS, "features", true, (&messages.Incrementing{}).NewId)
	if err != nil {
		return nil, fmt.Errorf("reading built-in features: %w", err)
	}
	return files, nil
})

// readFeatures reads every .feature file in fsys, known by uriDir joined
// with its path in fsys.
func readFeatures(fsys fs.FS, uriDir string, builtin bool, newID func() string) ([]FeatureFile, error) {
	var files []FeatureFile
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".feature") {
			return err
		}
		f, err := readFeature(fsys, p, path.Join(uriDir, p), newID)
		if err != nil {
			return err
		}
		f.builtin = builtin
		files = append(files, f)
		return nil
	})
	return files, err
}

// readPath reads the feature files at p, a directory or one file.
func readPath(p string, newID func() string) ([]FeatureFile, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return readFeatures(os.DirFS(p), filepath.ToSlash(p), false, newID)
	}
	if !strings.HasSuffix(p, ".feature") {
		return nil, nil
	}
	dir, name := filepath.Split(p)
	if dir == "" {
		dir = "."
	}
	f, err := readFeature(os.DirFS(dir), name, filepath.ToSlash(p), newID)
	if err != nil {
		return nil, err
	}
	return []FeatureFile{f}, nil
}

// selects tells whether the file's line selection takes the pickle whose
// scenario starts at scenarioLine and whose own line is line.
func (f FeatureFile) selects(scenarioLine, line int) bool {
	return f.lines == nil || f.lines[scenarioLine] || f.lines[line]
}

// lineSuffixRe is the ":LINE" of "file.feature:LINE".
var lineSuffixRe = regexp.MustCompile(`^(.+\.feature):([0-9]+)$`)

// LoadFeatures reads the built-in suite and every .feature file under the
// extra directories. Files holding @exhaustive scenarios go last: those
// scenarios spend the key's rate-limit window, which would starve anything
// scheduled after them.
func LoadFeatures(cfg PlanOptions) ([]FeatureFile, error) {
	newID := (&messages.Incrementing{}).NewId
	var files []FeatureFile
	if !cfg.NoBuiltin {
		builtin, err := builtinSuite()
		if err != nil {
			return nil, err
		}
		files = slices.Clone(builtin)
	}
	for _, dir := range cfg.FeatureDirs {
		if m := lineSuffixRe.FindStringSubmatch(dir); m != nil {
			f, err := loadOneScenario(m[1], m[2], newID)
			if err != nil {
				return nil, err
			}
			files = append(files, f)
			continue
		}
		found, err := readPath(dir, newID)
		if err != nil {
			return nil, fmt.Errorf("%w: reading features from %s: %w", kit.ErrUsage, dir, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%w: no .feature files in %s", kit.ErrUsage, dir)
		}
		files = append(files, found...)
	}
	files = mergeSelections(files)
	sort.SliceStable(files, func(i, j int) bool {
		return !bytes.Contains(files[i].content, []byte(tagExhaustive)) && bytes.Contains(files[j].content, []byte(tagExhaustive))
	})
	return files, nil
}

// loadOneScenario reads file.feature for --features file.feature:LINE.
func loadOneScenario(file, line string, newID func() string) (FeatureFile, error) {
	n, _ := strconv.Atoi(line)
	found, err := readPath(file, newID)
	if err != nil {
		return FeatureFile{}, fmt.Errorf("%w: reading features from %s: %w", kit.ErrUsage, file, err)
	}
	f := found[0]
	f.lines = map[int]bool{n: true}
	return f, nil
}

// mergeSelections joins several line selections of one file, and lets a
// whole-file mention win over a selection, so that each file runs once.
func mergeSelections(files []FeatureFile) []FeatureFile {
	at := map[string]int{}
	var out []FeatureFile
	for _, f := range files {
		i, ok := at[f.URI]
		if !ok {
			at[f.URI] = len(out)
			out = append(out, f)
			continue
		}
		switch {
		case out[i].lines == nil:
		case f.lines == nil:
			out[i].lines = nil
		default:
			for l := range f.lines {
				out[i].lines[l] = true
			}
		}
	}
	return out
}

// PlannedScenario is one pickle (a scenario or one row of an outline) and what
// the run will do with it.
type PlannedScenario struct {
	Feature  string
	URI      string
	Line     int
	Name     string
	Tags     []string
	Level    string
	Area     string
	Maturity string
	Selected bool   // matches the operator's tag expression and line
	Skip     string // why a selected scenario will not run; empty if it will
	// SkipAs is Disabled or Skipped, as the rule that refused it says.
	SkipAs kit.Status
	// Fingerprint joins godog's pickle of the scenario to it.
	Fingerprint string
	// Steps are where the pickle's steps are written, in its order.
	Steps []StepAt
}

// StepAt is where a step of a scenario is written: its keyword as written
// and its line in the scenario's file.
type StepAt struct {
	Keyword string
	Line    int
}

// Plan reads what each scenario of the features is and whether this run
// takes it. Results of the run are joined to it by the pickle's
// fingerprint (see Fingerprint), which godog's pickle of the same scenario
// has too.
func Plan(cfg PlanOptions, files []FeatureFile, env RunEnv) ([]*PlannedScenario, error) {
	var out []*PlannedScenario
	seen := map[string]bool{}
	for _, f := range files {
		if f.parseErr != nil {
			return nil, fmt.Errorf("%w: %s: %w", kit.ErrUsage, f.URI, f.parseErr)
		}
		if seen[f.URI] {
			return nil, fmt.Errorf("%w: two feature files named %s", kit.ErrUsage, f.URI)
		}
		seen[f.URI] = true
		if f.doc.Feature == nil {
			continue
		}
		lines := nodeLines(f.doc.Feature)
		nodes := stepNodes(f.doc.Feature)
		for _, p := range f.pickles {
			ps := &PlannedScenario{Feature: f.doc.Feature.Name, URI: f.URI, Name: p.Name, Fingerprint: Fingerprint(p)}
			for _, t := range p.Tags {
				ps.Tags = append(ps.Tags, t.Name)
			}
			for _, st := range p.Steps {
				var at StepAt
				if n := nodes[st.AstNodeIds[0]]; n != nil {
					at = StepAt{Keyword: n.Keyword, Line: int(n.Location.Line)}
				}
				ps.Steps = append(ps.Steps, at)
			}
			// The last AST node of a pickle is its example row when it has one.
			ps.Line = lines[p.AstNodeIds[len(p.AstNodeIds)-1]]
			ps.Level, ps.Area, ps.Maturity = classify(ps.Tags, f.URI)
			ps.Selected = matchTags(cfg.Tags, ps.Tags) && f.selects(lines[p.AstNodeIds[0]], ps.Line)
			ps.Skip, ps.SkipAs = skipReason(cfg, env, ps.Tags)
			out = append(out, ps)
		}
	}
	return out, nil
}

// Fingerprint is what a pickle is made of: its file, name, tags and steps
// with their arguments. godog's pickle of a scenario has the fingerprint
// the plan's has, whatever ids either parse gave it, so the runner joins
// godog's results to the plan by it. Pickles alike in all of this are the
// same check; only their lines tell them apart.
func Fingerprint(p *messages.Pickle) string {
	var b strings.Builder
	field := func(s string) {
		b.WriteString(strconv.Quote(s))
		b.WriteByte(' ')
	}
	field(p.Uri)
	field(p.Name)
	for _, t := range p.Tags {
		field(t.Name)
	}
	for _, st := range p.Steps {
		b.WriteString("| ")
		field(st.Text)
		if a := st.Argument; a != nil && a.DocString != nil {
			field(a.DocString.MediaType)
			field(a.DocString.Content)
		}
		if a := st.Argument; a != nil && a.DataTable != nil {
			for _, row := range a.DataTable.Rows {
				b.WriteString("/ ")
				for _, c := range row.Cells {
					field(c.Value)
				}
			}
		}
	}
	return b.String()
}

// nodeLines maps the ID of each scenario and Examples row of f to its line,
// where a pickle of it starts.
func nodeLines(f *messages.Feature) map[string]int {
	lines := map[string]int{}
	addScenario := func(s *messages.Scenario) {
		lines[s.Id] = int(s.Location.Line)
		for _, ex := range s.Examples {
			for _, row := range ex.TableBody {
				lines[row.Id] = int(row.Location.Line)
			}
		}
	}
	for _, c := range f.Children {
		switch {
		case c.Scenario != nil:
			addScenario(c.Scenario)
		case c.Rule != nil:
			for _, rc := range c.Rule.Children {
				if rc.Scenario != nil {
					addScenario(rc.Scenario)
				}
			}
		}
	}
	return lines
}

// classify reads level, area and maturity from the tags. A scenario without
// a level tag is held to @must: an operator's own check is presumably meant
// to count.
func classify(tags []string, uri string) (level, area, maturity string) {
	level = docs.Must
	for _, t := range tags {
		switch t {
		case "@" + docs.Should:
			level = docs.Should
		case tagSandbox:
			level = docs.Sandbox
		}
	}
	for _, a := range kit.AreaOrder {
		if hasTag(tags, "@"+a) {
			area = a
			break
		}
	}
	if area == "" {
		area = strings.TrimSuffix(path.Base(uri), ".feature")
	}
	switch {
	case hasTag(tags, tagBeta):
		maturity = strings.TrimPrefix(tagBeta, "@")
	case hasTag(tags, tagStable):
		maturity = strings.TrimPrefix(tagStable, "@")
	}
	return level, area, maturity
}

func hasTag(tags []string, t string) bool {
	for _, x := range tags {
		if x == t {
			return true
		}
	}
	return false
}

// skipRule keeps scenarios carrying any of its tags out of a run, for the
// reason it gives ("" when the rule does not apply to this run). The one
// table decides both what the report says and what godog is told to leave
// out, so the two cannot drift apart.
type skipRule struct {
	tags []string
	// status is Disabled when the operator's configuration leaves the
	// scenarios out, Skipped when they were wanted but cannot run here.
	status kit.Status
	reason func(cfg PlanOptions, env RunEnv) string
}

var skipRules = []skipRule{
	{[]string{tagSandbox}, kit.Disabled, func(cfg PlanOptions, _ RunEnv) string {
		if cfg.Profile != kit.ProfileSandbox {
			return "@sandbox checks the sandbox's own choices; run with --profile sandbox"
		}
		return ""
	}},
	{[]string{tagSeed}, kit.Skipped, func(_ PlanOptions, env RunEnv) string {
		if !env.Seeded {
			return "@seed checks the built-in seed, and a fresh account of this deployment does not hold it (started with other fixtures?)"
		}
		return ""
	}},
	{[]string{tagFrozenClock}, kit.Disabled, func(_ PlanOptions, env RunEnv) string {
		if env.Clock == ClockRunning {
			return "@frozen-clock moves the account's clock, and this sandbox's clocks run (started without -frozen-clock)"
		}
		return ""
	}},
	{[]string{tagRunningClock}, kit.Disabled, func(_ PlanOptions, env RunEnv) string {
		if env.Clock == ClockFrozen {
			return "@running-clock checks a clock that runs, and this sandbox's clocks are frozen (-frozen-clock)"
		}
		return ""
	}},
	{[]string{tagFrozenClock, tagRunningClock}, kit.Skipped, func(_ PlanOptions, env RunEnv) string {
		if env.Clock == "" {
			return "@frozen-clock and @running-clock need to know whether the sandbox's clocks are frozen, and POST /_sandbox/clock did not say"
		}
		return ""
	}},
	{[]string{tagDelivery}, kit.Disabled, func(cfg PlanOptions, _ RunEnv) string {
		if cfg.WebhookListen == "off" {
			return "@delivery needs conform's webhook receiver, which is off (--webhook-listen off)"
		}
		return ""
	}},
	{[]string{tagDelivery}, kit.Skipped, func(_ PlanOptions, env RunEnv) string {
		if env.NoReceiver != "" {
			return "@delivery needs conform's webhook receiver: " + env.NoReceiver
		}
		return ""
	}},
	{[]string{tagWrites, tagExhaustive}, kit.Disabled, func(cfg PlanOptions, _ RunEnv) string {
		if wire.IsLiveKey(cfg.APIKey) && !cfg.AllowWrites {
			return "live key: @writes and @exhaustive scenarios would change real data or spend its rate limit; pass --allow-writes to run them"
		}
		return ""
	}},
	{[]string{tagExhaustive}, kit.Disabled, func(cfg PlanOptions, _ RunEnv) string {
		if !cfg.Exhaustive {
			return "@exhaustive spends a whole rate-limit window; pass --exhaustive to run it"
		}
		return ""
	}},
}

// skipReason says why a scenario is kept out of this run by the safety and
// opt-in rules, and whether that is the configuration's choice (Disabled)
// or lost coverage (Skipped); "" if the rules allow it.
func skipReason(cfg PlanOptions, env RunEnv, tags []string) (string, kit.Status) {
	for _, r := range skipRules {
		for _, t := range r.tags {
			if hasTag(tags, t) {
				if why := r.reason(cfg, env); why != "" {
					return why, r.status
				}
			}
		}
	}
	return "", kit.Passed
}

// ExclusionTags is the tag expression that keeps the scenarios skipReason
// refuses out of godog's run.
func ExclusionTags(cfg PlanOptions, env RunEnv) []string {
	var ex []string
	seen := map[string]bool{}
	for _, r := range skipRules {
		if r.reason(cfg, env) == "" {
			continue
		}
		for _, t := range r.tags {
			if !seen[t] {
				seen[t] = true
				ex = append(ex, "~"+t)
			}
		}
	}
	return ex
}

var tagTermRe = regexp.MustCompile(`^~?@[A-Za-z0-9_.:-]+$`)

// ValidateTags refuses what godog would misread or panic on: an empty clause
// or term ("@a&&", "@a,,@b") and terms that are not tags.
func ValidateTags(expr string) error {
	if strings.TrimSpace(expr) == "" {
		return nil
	}
	for _, clause := range strings.Split(expr, "&&") {
		for _, term := range strings.Split(clause, ",") {
			if t := strings.TrimSpace(term); !tagTermRe.MatchString(t) {
				return fmt.Errorf("%w: invalid tag expression %q: %q is not a tag (want @tag or ~@tag, joined by \",\" for or and \"&&\" for and)", kit.ErrUsage, expr, t)
			}
		}
	}
	return nil
}

// matchTags evaluates a godog tag expression the way godog does: clauses
// joined by "&&" must all hold; within one, "," separated terms are or-ed,
// and "~" negates a term.
func matchTags(expr string, tags []string) bool {
	if strings.TrimSpace(expr) == "" {
		return true
	}
	for _, clause := range strings.Split(expr, "&&") {
		ok := false
		for _, term := range strings.Split(clause, ",") {
			term = strings.TrimSpace(term)
			neg := strings.HasPrefix(term, "~")
			name := "@" + strings.TrimPrefix(strings.TrimPrefix(term, "~"), "@")
			if hasTag(tags, name) != neg {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// ScenarioKey identifies a scenario (one row of an outline) across the plan
// and godog's run, whatever ids either gave it.
type ScenarioKey struct {
	URI  string
	Line int
}

// Key is where the scenario is: its file and line.
func (p *PlannedScenario) Key() ScenarioKey { return ScenarioKey{p.URI, p.Line} }

// GodogContent is the file as godog should run it: with a line selection,
// every scenario and Examples row not selected is blanked, lines kept in
// place, so that godog runs only what was asked for and reports the lines
// the author sees.
func GodogContent(f FeatureFile) []byte {
	if f.lines == nil {
		return f.content
	}
	doc := f.doc
	if doc == nil || doc.Feature == nil {
		return f.content
	}
	text := strings.SplitAfter(string(f.content), "\n")
	blank := func(from, to int) {
		for l := from; l < to && l <= len(text); l++ {
			text[l-1] = "\n"
		}
	}
	var scenarios []*messages.Scenario
	for _, c := range doc.Feature.Children {
		if c.Scenario != nil {
			scenarios = append(scenarios, c.Scenario)
		}
		if c.Rule != nil {
			for _, rc := range c.Rule.Children {
				if rc.Scenario != nil {
					scenarios = append(scenarios, rc.Scenario)
				}
			}
		}
	}
	var rules []int
	for _, c := range doc.Feature.Children {
		if c.Rule != nil {
			rules = append(rules, int(c.Rule.Location.Line))
		}
	}
	start := func(sc *messages.Scenario) int {
		l := int(sc.Location.Line)
		for _, t := range sc.Tags {
			l = min(l, int(t.Location.Line))
		}
		return l
	}
	for i, sc := range scenarios {
		end := len(text) + 1
		if i+1 < len(scenarios) {
			end = start(scenarios[i+1])
		}
		for _, r := range rules {
			if r > int(sc.Location.Line) {
				end = min(end, r)
			}
		}
		if f.lines[int(sc.Location.Line)] {
			continue
		}
		rowChosen := false
		for _, ex := range sc.Examples {
			for _, row := range ex.TableBody {
				rowChosen = rowChosen || f.lines[int(row.Location.Line)]
			}
		}
		if !rowChosen {
			blank(start(sc), end)
			continue
		}
		for _, ex := range sc.Examples {
			for _, row := range ex.TableBody {
				if l := int(row.Location.Line); !f.lines[l] {
					blank(l, l+1)
				}
			}
		}
	}
	return []byte(strings.Join(text, ""))
}
