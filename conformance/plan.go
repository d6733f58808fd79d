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
}

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
	sort.SliceStable(files, func(i, j int) bool {
		return !bytes.Contains(files[i].content, []byte(tagExhaustive)) && bytes.Contains(files[j].content, []byte(tagExhaustive))
	})
	return files, nil
}

// plannedScenario is one pickle (a scenario or one row of an outline) and what
// the run will do with it.
type plannedScenario struct {
	id       string
	feature  string
	uri      string
	line     int
	name     string
	tags     []string
	level    string
	area     string
	maturity string
	selected bool   // matches the operator's tag expression
	skip     string // why a selected scenario will not run; empty if it will
}

// plan parses the features exactly as godog does (same order, same
// incrementing ids) so that results can be joined to lines and areas by
// pickle id.
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
			ps := &plannedScenario{id: p.Id, feature: doc.Feature.Name, uri: f.uri, name: p.Name}
			for _, t := range p.Tags {
				ps.tags = append(ps.tags, t.Name)
			}
			// The last AST node of a pickle is its example row when it has one.
			ps.line = lines[p.AstNodeIds[len(p.AstNodeIds)-1]]
			ps.level, ps.area, ps.maturity = classify(ps.tags, f.uri)
			ps.selected = matchTags(cfg.Tags, ps.tags)
			ps.skip = skipReason(cfg, env, ps.tags)
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

// skipReason says why a scenario is kept out of this run by the safety and
// opt-in rules, or "" if they allow it.
func skipReason(cfg Config, env runEnv, tags []string) string {
	switch {
	case hasTag(tags, tagSandbox) && cfg.Profile != ProfileSandbox:
		return "@sandbox checks the sandbox's own choices; run with --profile sandbox"
	case hasTag(tags, tagSeed) && !env.seeded:
		return "@seed checks the built-in seed, and a fresh account of this deployment does not hold it (started with other fixtures?)"
	case hasTag(tags, tagDelivery) && env.noReceiver != "":
		return "@delivery needs conform's webhook receiver: " + env.noReceiver
	case IsLiveKey(cfg.APIKey) && !cfg.AllowWrites && (hasTag(tags, tagWrites) || hasTag(tags, tagExhaustive)):
		return "live key: @writes and @exhaustive scenarios would change real data or spend its rate limit; pass --allow-writes to run them"
	case hasTag(tags, tagExhaustive) && !cfg.Exhaustive:
		return "@exhaustive spends a whole rate-limit window; pass --exhaustive to run it"
	}
	return ""
}

// exclusionTags is the tag expression that keeps skipped scenarios out of
// godog's run; it mirrors skipReason.
func exclusionTags(cfg Config, env runEnv) []string {
	var ex []string
	if cfg.Profile != ProfileSandbox {
		ex = append(ex, "~"+tagSandbox)
	}
	if !env.seeded {
		ex = append(ex, "~"+tagSeed)
	}
	if env.noReceiver != "" {
		ex = append(ex, "~"+tagDelivery)
	}
	if IsLiveKey(cfg.APIKey) && !cfg.AllowWrites {
		ex = append(ex, "~"+tagWrites, "~"+tagExhaustive)
	}
	if !cfg.Exhaustive {
		ex = append(ex, "~"+tagExhaustive)
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
