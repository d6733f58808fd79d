package conformance

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	gherkin "github.com/cucumber/gherkin/go/v26"
	messages "github.com/cucumber/messages/go/v21"

	"github.com/testcampaign/kit/features"
)

// Levels, from the tags of CONTRACT.md.
const (
	LevelMust    = "must"
	LevelShould  = "should"
	LevelSandbox = "sandbox"
)

// Tags with a meaning to the runner.
const (
	tagWrites     = "@writes"
	tagExhaustive = "@exhaustive"
	tagSandbox    = "@sandbox"
	tagSeed       = "@seed"
	tagDelivery   = "@delivery"
)

// runEnv is what the run learnt about the deployment before planning.
type runEnv struct {
	seeded bool // a fresh sandbox account holds the built-in seed
	// noReceiver says why conform's webhook receiver cannot take
	// deliveries from the deployment; empty when it can.
	noReceiver string
}

// Areas in report order: those of the built-in suite. Scenarios of other
// features are reported under their file name.
var areaOrder = [...]string{"envelope", "auth", "errors", "ratelimit", "campaigns", "bugs", "webhooks", "testers", "analytics", "versioning", areaSchema}

// areaSchema is where --openapi reports exchanges that break the document,
// whatever scenario made them.
const areaSchema = "schema"

type featureFile struct {
	uri     string
	content []byte
	builtin bool
	// lines, when set, are the only scenarios of the file to run: the line
	// of a Scenario (or Scenario Outline), or of one row of its Examples.
	lines map[int]bool
}

// selects tells whether the file's line selection takes the pickle whose
// scenario starts at scenarioLine and whose own line is line.
func (f featureFile) selects(scenarioLine, line int) bool {
	return f.lines == nil || f.lines[scenarioLine] || f.lines[line]
}

// lineSuffixRe is the ":LINE" of "file.feature:LINE".
var lineSuffixRe = regexp.MustCompile(`^(.+\.feature):([0-9]+)$`)

// loadFeatures reads the built-in suite and every .feature file under the
// extra directories. Files holding @exhaustive scenarios go last: those
// scenarios spend the key's rate-limit window, which would starve anything
// scheduled after them.
func loadFeatures(cfg Config) ([]featureFile, error) {
	var files []featureFile
	if !cfg.NoBuiltin {
		err := fs.WalkDir(features.FS, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".feature") {
				return err
			}
			b, err := fs.ReadFile(features.FS, p)
			if err != nil {
				return err
			}
			files = append(files, featureFile{uri: path.Join("features", p), content: b, builtin: true})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading built-in features: %w", err)
		}
	}
	for _, dir := range cfg.FeatureDirs {
		if m := lineSuffixRe.FindStringSubmatch(dir); m != nil {
			f, err := loadOneScenario(m[1], m[2])
			if err != nil {
				return nil, err
			}
			files = append(files, f)
			continue
		}
		found := 0
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".feature") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			found++
			files = append(files, featureFile{uri: filepath.ToSlash(p), content: b})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%w: reading features from %s: %v", ErrUsage, dir, err)
		}
		if found == 0 {
			return nil, fmt.Errorf("%w: no .feature files in %s", ErrUsage, dir)
		}
	}
	files = mergeSelections(files)
	sort.SliceStable(files, func(i, j int) bool {
		return !bytes.Contains(files[i].content, []byte(tagExhaustive)) && bytes.Contains(files[j].content, []byte(tagExhaustive))
	})
	return files, nil
}

// loadOneScenario reads file.feature for --features file.feature:LINE.
func loadOneScenario(file, line string) (featureFile, error) {
	n, _ := strconv.Atoi(line)
	b, err := os.ReadFile(file)
	if err != nil {
		return featureFile{}, fmt.Errorf("%w: reading features from %s: %v", ErrUsage, file, err)
	}
	return featureFile{uri: filepath.ToSlash(file), content: b, lines: map[int]bool{n: true}}, nil
}

// mergeSelections joins several line selections of one file, and lets a
// whole-file mention win over a selection, so that each file runs once.
func mergeSelections(files []featureFile) []featureFile {
	at := map[string]int{}
	var out []featureFile
	for _, f := range files {
		i, ok := at[f.uri]
		if !ok {
			at[f.uri] = len(out)
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

// plannedScenario is one pickle (a scenario or one row of an outline) and what
// the run will do with it.
type plannedScenario struct {
	feature  string
	uri      string
	line     int
	name     string
	tags     []string
	level    string
	area     string
	maturity string
	selected bool   // matches the operator's tag expression and line
	skip     string // why a selected scenario will not run; empty if it will
	// skipAs is Disabled or Skipped, as the rule that refused it says.
	skipAs Status
}

// plan reads what each scenario of the features is and whether this run
// takes it. Results of the run are joined to it by file and line, which
// godog's own documents give for its pickle ids (see pickleIndex).
func plan(cfg Config, files []featureFile, env runEnv) ([]*plannedScenario, error) {
	newID := (&messages.Incrementing{}).NewId
	var out []*plannedScenario
	seen := map[string]bool{}
	for _, f := range files {
		doc, err := gherkin.ParseGherkinDocument(bytes.NewReader(f.content), newID)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUsage, f.uri, err)
		}
		if seen[f.uri] {
			return nil, fmt.Errorf("%w: two feature files named %s", ErrUsage, f.uri)
		}
		seen[f.uri] = true
		if doc.Feature == nil {
			continue
		}
		lines := nodeLines(doc.Feature)
		for _, p := range gherkin.Pickles(*doc, f.uri, newID) {
			ps := &plannedScenario{feature: doc.Feature.Name, uri: f.uri, name: p.Name}
			for _, t := range p.Tags {
				ps.tags = append(ps.tags, t.Name)
			}
			// The last AST node of a pickle is its example row when it has one.
			ps.line = lines[p.AstNodeIds[len(p.AstNodeIds)-1]]
			ps.level, ps.area, ps.maturity = classify(ps.tags, f.uri)
			ps.selected = matchTags(cfg.Tags, ps.tags) && f.selects(lines[p.AstNodeIds[0]], ps.line)
			ps.skip, ps.skipAs = skipReason(cfg, env, ps.tags)
			out = append(out, ps)
		}
	}
	return out, nil
}

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
	level = LevelMust
	for _, t := range tags {
		switch t {
		case "@should":
			level = LevelShould
		case "@sandbox":
			level = LevelSandbox
		}
	}
	for _, a := range areaOrder {
		if hasTag(tags, "@"+a) {
			area = a
			break
		}
	}
	if area == "" {
		area = strings.TrimSuffix(path.Base(uri), ".feature")
	}
	switch {
	case hasTag(tags, "@beta"):
		maturity = "beta"
	case hasTag(tags, "@stable"):
		maturity = "stable"
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
	status Status
	reason func(cfg Config, env runEnv) string
}

var skipRules = []skipRule{
	{[]string{tagSandbox}, Disabled, func(cfg Config, _ runEnv) string {
		if cfg.Profile != ProfileSandbox {
			return "@sandbox checks the sandbox's own choices; run with --profile sandbox"
		}
		return ""
	}},
	{[]string{tagSeed}, Skipped, func(_ Config, env runEnv) string {
		if !env.seeded {
			return "@seed checks the built-in seed, and a fresh account of this deployment does not hold it (started with other fixtures?)"
		}
		return ""
	}},
	{[]string{tagDelivery}, Disabled, func(cfg Config, _ runEnv) string {
		if cfg.WebhookListen == "off" {
			return "@delivery needs conform's webhook receiver, which is off (--webhook-listen off)"
		}
		return ""
	}},
	{[]string{tagDelivery}, Skipped, func(_ Config, env runEnv) string {
		if env.noReceiver != "" {
			return "@delivery needs conform's webhook receiver: " + env.noReceiver
		}
		return ""
	}},
	{[]string{tagWrites, tagExhaustive}, Disabled, func(cfg Config, _ runEnv) string {
		if IsLiveKey(cfg.APIKey) && !cfg.AllowWrites {
			return "live key: @writes and @exhaustive scenarios would change real data or spend its rate limit; pass --allow-writes to run them"
		}
		return ""
	}},
	{[]string{tagExhaustive}, Disabled, func(cfg Config, _ runEnv) string {
		if !cfg.Exhaustive {
			return "@exhaustive spends a whole rate-limit window; pass --exhaustive to run it"
		}
		return ""
	}},
}

// skipReason says why a scenario is kept out of this run by the safety and
// opt-in rules, and whether that is the configuration's choice (Disabled)
// or lost coverage (Skipped); "" if the rules allow it.
func skipReason(cfg Config, env runEnv, tags []string) (string, Status) {
	for _, r := range skipRules {
		for _, t := range r.tags {
			if hasTag(tags, t) {
				if why := r.reason(cfg, env); why != "" {
					return why, r.status
				}
			}
		}
	}
	return "", Passed
}

// exclusionTags is the tag expression that keeps the scenarios skipReason
// refuses out of godog's run.
func exclusionTags(cfg Config, env runEnv) []string {
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

// validateTags refuses what godog would misread or panic on: an empty clause
// or term ("@a&&", "@a,,@b") and terms that are not tags.
func validateTags(expr string) error {
	if strings.TrimSpace(expr) == "" {
		return nil
	}
	for _, clause := range strings.Split(expr, "&&") {
		for _, term := range strings.Split(clause, ",") {
			if t := strings.TrimSpace(term); !tagTermRe.MatchString(t) {
				return fmt.Errorf("%w: invalid tag expression %q: %q is not a tag (want @tag or ~@tag, joined by \",\" for or and \"&&\" for and)", ErrUsage, expr, t)
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

// scenarioKey identifies a scenario (one row of an outline) across the plan
// and godog's run, whatever ids either gave it.
type scenarioKey struct {
	uri  string
	line int
}

func (p *plannedScenario) key() scenarioKey { return scenarioKey{p.uri, p.line} }

// godogContent is the file as godog should run it: with a line selection,
// every scenario and Examples row not selected is blanked, lines kept in
// place, so that godog runs only what was asked for and reports the lines
// the author sees.
func godogContent(f featureFile) []byte {
	if f.lines == nil {
		return f.content
	}
	doc, err := gherkin.ParseGherkinDocument(bytes.NewReader(f.content), (&messages.Incrementing{}).NewId)
	if err != nil || doc.Feature == nil {
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
