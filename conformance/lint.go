package conformance

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"sync"

	gherkin "github.com/cucumber/gherkin/go/v26"
	messages "github.com/cucumber/messages/go/v21"

	"github.com/testcampaign/kit/features"
)

// Check validates feature files without sending a request: every step must
// match exactly one step of the library, and every {placeholder} and
// "<placeholder>" must be known where it is used. It returns one line per
// problem, each naming the file and line.
func Check(cfg Config) ([]string, error) {
	if cfg.NoBuiltin && len(cfg.FeatureDirs) == 0 {
		return nil, fmt.Errorf("%w: nothing to check", ErrUsage)
	}
	files, err := loadFeatures(cfg)
	if err != nil {
		return nil, err
	}
	return lint(files), nil
}

// savedAsRe finds the name a step saves a value under.
var savedAsRe = regexp.MustCompile(` as "([^"]+)"$`)

// implicitSaves are the names steps save without saying "as".
var implicitSaves = []struct {
	step  *regexp.Regexp
	names []string
}{
	{regexp.MustCompile(`^a bug with status "`), []string{"bugId", "campaignId", "testerId"}},
	{regexp.MustCompile(`^I register (a|\d+) webhooks? for `), []string{"webhookId", "webhookSecret"}},
}

var (
	outlineParamRe = regexp.MustCompile(`<[A-Za-z_][A-Za-z0-9_ -]*>`)
	braceRe        = regexp.MustCompile(`\{([A-Za-z][A-Za-z0-9_.-]*)\}`)
	angleValueRe   = regexp.MustCompile(`"(<[^"<>]*>)"`)
)

// builtinProblems lints the embedded suite once per process: it never
// changes, and matching every step against the library is not free.
var builtinProblems = sync.OnceValue(func() []string {
	var builtin []featureFile
	err := fs.WalkDir(features.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".feature") {
			return err
		}
		b, err := fs.ReadFile(features.FS, p)
		builtin = append(builtin, featureFile{uri: path.Join("features", p), content: b, builtin: true})
		return err
	})
	if err != nil {
		return []string{fmt.Sprintf("reading built-in features: %v", err)}
	}
	return lintFiles(builtin)
})

// lint returns the authoring problems of files, the built-in ones included.
func lint(files []featureFile) []string {
	var extra []featureFile
	builtin := false
	for _, f := range files {
		if f.builtin {
			builtin = true
		} else {
			extra = append(extra, f)
		}
	}
	var out []string
	if builtin {
		out = append(out, builtinProblems()...)
	}
	return append(out, lintFiles(extra)...)
}

func lintFiles(files []featureFile) []string {
	steps := compileSteps()
	defs := stepDefs()
	var problems []string
	newID := (&messages.Incrementing{}).NewId
	for _, f := range files {
		doc, err := gherkin.ParseGherkinDocument(bytes.NewReader(f.content), newID)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f.uri, err))
			continue
		}
		if doc.Feature == nil {
			continue
		}
		lines := stepLines(doc.Feature)
		for _, p := range gherkin.Pickles(*doc, f.uri, newID) {
			known := map[string]bool{"key": true, "random": true, "webhookURL": true}
			for _, st := range p.Steps {
				where := fmt.Sprintf("%s:%d", f.uri, lines[st.AstNodeIds[0]])
				n := 0
				for _, cs := range steps {
					if cs.re.MatchString(st.Text) {
						n++
					}
				}
				switch {
				case n == 0:
					problems = append(problems, fmt.Sprintf("%s: undefined step %q; did you mean %q?", where, st.Text, nearest(st.Text, defs)))
				case n > 1:
					problems = append(problems, fmt.Sprintf("%s: step %q matches %d steps of the library", where, st.Text, n))
				}
				// An outline row fills every <parameter> it has a column for;
				// one left over is a misspelt or missing column.
				if len(p.AstNodeIds) > 1 {
					if m := outlineParamRe.FindString(st.Text); m != "" {
						problems = append(problems, fmt.Sprintf("%s: unknown outline parameter %s: no column of the Examples has that name", where, m))
					}
				}
				texts := []string{st.Text}
				if st.Argument != nil && st.Argument.DocString != nil {
					texts = append(texts, st.Argument.DocString.Content)
					for _, m := range angleValueRe.FindAllStringSubmatch(st.Argument.DocString.Content, -1) {
						if _, ok := placeholderChecks[m[1]]; !ok && strings.Contains(st.Text, "should match") {
							problems = append(problems, fmt.Sprintf("%s: unknown placeholder %s (known: %s)", where, m[1], strings.Join(PlaceholderNames(), " ")))
						}
					}
				}
				for _, t := range texts {
					for _, m := range braceRe.FindAllStringSubmatch(t, -1) {
						if !known[m[1]] {
							problems = append(problems, fmt.Sprintf("%s: unknown placeholder {%s}: no earlier step of the scenario saves %q", where, m[1], m[1]))
						}
					}
				}
				if m := savedAsRe.FindStringSubmatch(st.Text); m != nil {
					known[m[1]] = true
				}
				for _, is := range implicitSaves {
					if is.step.MatchString(st.Text) {
						for _, n := range is.names {
							known[n] = true
						}
					}
				}
			}
		}
	}
	return problems
}

func stepLines(f *messages.Feature) map[string]int {
	lines := map[string]int{}
	add := func(steps []*messages.Step) {
		for _, s := range steps {
			lines[s.Id] = int(s.Location.Line)
		}
	}
	for _, c := range f.Children {
		switch {
		case c.Background != nil:
			add(c.Background.Steps)
		case c.Scenario != nil:
			add(c.Scenario.Steps)
		case c.Rule != nil:
			for _, rc := range c.Rule.Children {
				if rc.Background != nil {
					add(rc.Background.Steps)
				}
				if rc.Scenario != nil {
					add(rc.Scenario.Steps)
				}
			}
		}
	}
	return lines
}

// nearest returns the library example closest to text, by edit distance
// after dropping the keyword.
func nearest(text string, defs []stepDef) string {
	best, bestD := "", -1
	for _, d := range defs {
		ex := d.Example
		if i := strings.IndexByte(ex, '\n'); i >= 0 {
			ex = ex[:i]
		}
		_, ex, _ = strings.Cut(ex, " ")
		if dist := editDistance(text, ex); bestD < 0 || dist < bestD {
			best, bestD = ex, dist
		}
	}
	return best
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
