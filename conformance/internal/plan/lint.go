package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	messages "github.com/cucumber/messages/go/v21"

	"github.com/testcampaign/kit/conformance/internal/steps"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// savedAsRe finds the name a step saves a value under.
var savedAsRe = regexp.MustCompile(` as "([^"]+)"$`)

// savedIDAsRe is the first of two names a step saves ("saving its id as
// "bugId" and the value as "newStatus"").
var savedIDAsRe = regexp.MustCompile(`saving its id as "([^"]+)"`)

// implicitSaves are the names steps save without saying "as".
var implicitSaves = []struct {
	step  *regexp.Regexp
	names []string
}{
	{regexp.MustCompile(`^a bug with status "`), []string{"bugId", "campaignId", "testerId"}},
	{regexp.MustCompile(`^I register (a|\d+) webhooks? for `), []string{"webhookId", "webhookSecret"}},
	{regexp.MustCompile(`^I plan the fault:$`), []string{"faultId"}},
}

var (
	outlineParamRe = regexp.MustCompile(`<[A-Za-z_][A-Za-z0-9_ -]*>`)
	braceRe        = regexp.MustCompile(`\{([A-Za-z][A-Za-z0-9_.-]*)\}`)
	angleValueRe   = regexp.MustCompile(`"(<[^"<>]*>)"`)
)

// builtinProblems lints the embedded suite once per process: it never
// changes, and matching every step against the library is not free.
var builtinProblems = sync.OnceValue(func() []string {
	builtin, err := builtinSuite()
	if err != nil {
		return []string{err.Error()}
	}
	return lintFiles(builtin)
})

// Lint returns the authoring problems of files, the built-in ones included.
func Lint(files []FeatureFile) []string {
	var extra []FeatureFile
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

func lintFiles(files []FeatureFile) []string {
	library := steps.NewLibrary()
	docs := steps.Steps()
	var problems []string
	seen := map[string]bool{}
	report := func(p string) {
		// An outline repeats its steps for every row; the mistake is the
		// author's once.
		if !seen[p] {
			seen[p] = true
			problems = append(problems, p)
		}
	}
	for _, f := range files {
		if f.parseErr != nil {
			report(fmt.Sprintf("%s: %v", f.URI, f.parseErr))
			continue
		}
		if f.doc.Feature == nil {
			continue
		}
		astSteps := stepNodes(f.doc.Feature)
		columns := outlineColumns(f.doc.Feature)
		for _, p := range tagLines(f.URI, f.doc.Feature) {
			report(p)
		}
		for _, p := range sameNames(f.URI, f.doc.Feature) {
			report(p)
		}
		for _, p := range f.pickles {
			known := map[string]bool{}
			for _, b := range steps.BuiltinPlaceholders() {
				known[b.Name] = true
			}
			var tags []string
			for _, t := range p.Tags {
				tags = append(tags, t.Name)
			}
			given := map[string]bool{}
			for _, st := range p.Steps {
				node := astSteps[st.AstNodeIds[0]]
				where := fmt.Sprintf("%s:%d", f.URI, node.Location.Line)
				matched := library.Matching(st.Text)
				for _, p := range stepNeeds(where, tags, st.Text, matched, given) {
					report(p)
				}
				for _, d := range matched {
					if d.Gives != "" {
						given[d.Gives] = true
					}
				}
				for _, m := range savedNameRe.FindAllStringSubmatch(st.Text, -1) {
					if !known[m[1]] {
						report(fmt.Sprintf("%s: no earlier step of the scenario saves %q", where, m[1]))
					}
				}
				keyword := strings.TrimSpace(node.Keyword)
				switch n := len(matched); {
				case n == 0:
					hint := inlineArgument(library, keyword, st.Text)
					if hint == "" {
						hint = suggestions(keyword, st.Text, docs)
					}
					report(fmt.Sprintf("%s: undefined step: %s%s", where, keyword+" "+st.Text, hint))
				case n == 1:
					if p := argumentProblem(keyword, node, matched[0], docs); p != "" {
						report(where + ": " + p)
					}
				case n > 1:
					report(fmt.Sprintf("%s: step %q matches %d steps of the library", where, st.Text, n))
				}
				// An outline row fills every <parameter> it has a column for;
				// one left over is a misspelt or missing column.
				if len(p.AstNodeIds) > 1 {
					if m := outlineParamRe.FindString(st.Text); m != "" {
						report(fmt.Sprintf("%s: unknown outline parameter %s: the Examples have the columns %s", where, m, columns[p.AstNodeIds[0]]))
					}
				}
				texts := []string{st.Text}
				if st.Argument != nil && st.Argument.DocString != nil {
					content := st.Argument.DocString.Content
					texts = append(texts, content)
					if jsonDocRe.MatchString(st.Text) && node.DocString != nil {
						if msg := docStringJSONError(content); msg != "" {
							report(fmt.Sprintf("%s:%d: the doc string of %q is not JSON: %s", f.URI, node.DocString.Location.Line, st.Text, msg))
						}
					}
					for _, m := range angleValueRe.FindAllStringSubmatch(content, -1) {
						if _, ok := wire.PlaceholderChecks[m[1]]; !ok && strings.Contains(st.Text, "should match") {
							report(fmt.Sprintf("%s: unknown placeholder %s (known: %s)", where, m[1], strings.Join(wire.PlaceholderNames(), " ")))
						}
					}
				}
				for _, t := range texts {
					for _, m := range braceRe.FindAllStringSubmatch(t, -1) {
						if !known[m[1]] {
							report(fmt.Sprintf("%s: unknown placeholder {%s}: no earlier step of the scenario saves %q", where, m[1], m[1]))
						}
					}
				}
				for _, re := range []*regexp.Regexp{savedAsRe, savedIDAsRe} {
					if m := re.FindStringSubmatch(st.Text); m != nil {
						known[m[1]] = true
					}
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

// jsonDocRe finds the steps whose doc string must be a JSON document.
var jsonDocRe = regexp.MustCompile(`(with JSON|should match|should (?:not )?contain|I plan the fault):$`)

// docStringJSONError says why a doc string is not JSON, naming the line of
// the doc string at fault, or "" if it is JSON. Placeholders stand for
// values the run fills in, so each counts as a number here: in quotes it is
// text, bare it is a value.
func docStringJSONError(content string) string {
	text := braceRe.ReplaceAllString(content, "0")
	var v any
	err := json.Unmarshal([]byte(text), &v)
	if err == nil {
		return ""
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line := 1 + strings.Count(text[:min(int(syn.Offset), len(text))], "\n")
		return fmt.Sprintf("%v (line %d of the doc string)", err, line)
	}
	return err.Error()
}

// stepNodes maps the AST id of every step of a feature to the step, for
// its line, keyword and doc string: the lint and the plan place a pickle
// step at its file and line through it.
func stepNodes(f *messages.Feature) map[string]*messages.Step {
	nodes := map[string]*messages.Step{}
	add := func(steps []*messages.Step) {
		for _, s := range steps {
			nodes[s.Id] = s
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
	return nodes
}

// outlineColumns names, per scenario AST id, the columns its Examples have.
func outlineColumns(f *messages.Feature) map[string]string {
	out := map[string]string{}
	add := func(sc *messages.Scenario) {
		var cols []string
		for _, ex := range sc.Examples {
			if ex.TableHeader == nil {
				continue
			}
			for _, c := range ex.TableHeader.Cells {
				if !slices.Contains(cols, "<"+c.Value+">") {
					cols = append(cols, "<"+c.Value+">")
				}
			}
		}
		out[sc.Id] = strings.Join(cols, " ")
	}
	for _, c := range f.Children {
		if c.Scenario != nil {
			add(c.Scenario)
		}
		if c.Rule != nil {
			for _, rc := range c.Rule.Children {
				if rc.Scenario != nil {
					add(rc.Scenario)
				}
			}
		}
	}
	return out
}

// valueRe finds the values an author wrote in a step: quoted text, and bare
// numbers, booleans and null.
var valueRe = regexp.MustCompile(`"[^"]*"|'[^']*'|\b-?[0-9]+(?:\.[0-9]+)?\b|\b(?:true|false|null)\b`)

// shape is a step with its values blanked, so that steps compare by their
// wording, not by what they hold.
func shape(text string) string {
	return valueRe.ReplaceAllStringFunc(text, func(v string) string {
		if v[0] == '"' || v[0] == '\'' {
			return `"…"`
		}
		return "N"
	})
}

// valueKinds counts the quoted and the bare values of a step.
func valueKinds(text string) [2]int {
	var n [2]int
	for _, v := range valueRe.FindAllString(text, -1) {
		if v[0] == '"' || v[0] == '\'' {
			n[0]++
		} else {
			n[1]++
		}
	}
	return n
}

// maxSuggestions is how many steps "did you mean" offers.
const maxSuggestions = 3

// suggestions offers the library steps closest in wording to an undefined
// one, each with the author's keyword and values in place of the example's,
// ready to paste; or says that none is close.
func suggestions(keyword, text string, docs []kit.StepDoc) string {
	near := closeSteps(text, docs)
	if len(near) == 0 {
		return "; no close step (`conform steps` lists them all)"
	}
	var b strings.Builder
	b.WriteString("; did you mean:")
	for _, c := range near {
		b.WriteString("\n      " + keyword + " " + c)
	}
	return b.String()
}

// closeSteps are up to maxSuggestions library steps closest in wording to
// text, closest first, each with the author's values in place of the
// example's.
func closeSteps(text string, docs []kit.StepDoc) []string {
	type cand struct {
		text string
		dist int
	}
	want := shape(text)
	var cands []cand
	seen := map[string]bool{}
	for _, d := range docs {
		ex, _, _ := strings.Cut(d.Example, "\n")
		_, ex, _ = strings.Cut(ex, " ")
		filled := fillValues(ex, text)
		// A suggestion that its own step would not take is no suggestion.
		if seen[filled] || !regexp.MustCompile(d.Pattern).MatchString(filled) {
			continue
		}
		seen[filled] = true
		dist := editDistance(want, shape(ex))
		// A step taking other kinds of values than the author wrote
		// ("draft" for true) would not keep them.
		if valueKinds(ex) != valueKinds(text) {
			dist += 6
		}
		// Further than a third of the step's wording is another step.
		if dist <= max(4, len(want)/3) {
			cands = append(cands, cand{filled, dist})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].dist < cands[j].dist })
	var out []string
	for _, c := range cands[:min(maxSuggestions, len(cands))] {
		out = append(out, c.text)
	}
	return out
}

// fillValues puts the author's values into a library example: quoted
// values into its quoted slots and bare values into its bare slots, in
// order; slots the author gave nothing for keep the example's value.
func fillValues(example, authored string) string {
	var quoted, bare []string
	for _, v := range valueRe.FindAllString(authored, -1) {
		if v[0] == '"' || v[0] == '\'' {
			quoted = append(quoted, v)
		} else {
			bare = append(bare, v)
		}
	}
	return valueRe.ReplaceAllStringFunc(example, func(v string) string {
		switch {
		case v[0] == '"' && len(quoted) > 0:
			v, quoted = `"`+strings.Trim(quoted[0], `"'`)+`"`, quoted[1:]
		case v[0] == '\'' && len(quoted) > 0:
			v, quoted = `'`+strings.Trim(quoted[0], `"'`)+`'`, quoted[1:]
		case v[0] != '"' && v[0] != '\'' && len(bare) > 0:
			v, bare = bare[0], bare[1:]
		}
		return v
	})
}

// UnknownTags flags each tag of the expression that no scenario carries,
// with the closest one that some scenario does: tags are case-sensitive,
// so "@Webhooks" would silently select nothing.
func UnknownTags(expr string, files []FeatureFile) []string {
	if strings.TrimSpace(expr) == "" {
		return nil
	}
	known := map[string]bool{}
	for _, f := range files {
		for _, p := range f.pickles {
			for _, t := range p.Tags {
				known[t.Name] = true
			}
		}
	}
	var problems []string
	for _, clause := range strings.Split(expr, "&&") {
		for _, term := range strings.Split(clause, ",") {
			name := "@" + strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(term), "~"), "@")
			if known[name] {
				continue
			}
			problems = append(problems, fmt.Sprintf("--tags %q: no scenario carries the tag %s%s", expr, name, closestTag(name, known)))
		}
	}
	return problems
}

func closestTag(name string, known map[string]bool) string {
	best, bestD := "", -1
	for t := range known {
		d := editDistance(strings.ToLower(name), strings.ToLower(t))
		if bestD < 0 || d < bestD || (d == bestD && t < best) {
			best, bestD = t, d
		}
	}
	switch {
	case best == "":
		return ""
	case bestD == 0:
		return fmt.Sprintf("; tags are case-sensitive: did you mean %s?", best)
	case bestD <= max(2, len(name)/3):
		return fmt.Sprintf("; did you mean %s?", best)
	}
	return ""
}

// UnmatchedLines flags a file.feature:LINE whose line starts no scenario
// and no Examples row.
func UnmatchedLines(files []FeatureFile) []string {
	var problems []string
	for _, f := range files {
		doc := f.doc
		if f.lines == nil || doc == nil || doc.Feature == nil {
			continue
		}
		starts := nodeLines(doc.Feature)
		valid := map[int]bool{}
		var scenarioLines []int
		for _, l := range starts {
			valid[l] = true
		}
		for _, c := range doc.Feature.Children {
			if c.Scenario != nil {
				scenarioLines = append(scenarioLines, int(c.Scenario.Location.Line))
			}
		}
		for l := range f.lines {
			if !valid[l] {
				problems = append(problems, fmt.Sprintf("%s:%d: no Scenario, Scenario Outline or Examples row starts on line %d (scenarios start on lines %s)",
					f.URI, l, l, strings.Trim(fmt.Sprint(scenarioLines), "[]")))
			}
		}
	}
	sort.Strings(problems)
	return problems
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
