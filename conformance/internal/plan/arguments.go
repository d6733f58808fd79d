package plan

import (
	"fmt"
	"regexp"
	"strings"

	messages "github.com/cucumber/messages/go/v21"

	"github.com/testcampaign/kit/conformance/internal/steps"
	"github.com/testcampaign/kit/conformance/kit"
)

// Mistakes in what a step has written under it, and in a feature's
// scenario names. godog finds the first kind only when the scenario runs,
// in words of its own, and never the second: the reports would show two
// scenarios as one.

// scenariosOf are the scenarios of a feature, its rules' included, in the
// order they are written.
func scenariosOf(f *messages.Feature) []*messages.Scenario {
	var out []*messages.Scenario
	for _, c := range f.Children {
		if c.Scenario != nil {
			out = append(out, c.Scenario)
		}
		if c.Rule != nil {
			for _, rc := range c.Rule.Children {
				if rc.Scenario != nil {
					out = append(out, rc.Scenario)
				}
			}
		}
	}
	return out
}

// sameNames flags every scenario named as an earlier one of its feature:
// junit, cucumber JSON and the HTML report name a scenario by its feature
// and its name, so the two would read as one scenario run twice.
func sameNames(uri string, f *messages.Feature) []string {
	first := map[string]int64{}
	var out []string
	for _, sc := range scenariosOf(f) {
		name := strings.TrimSpace(sc.Name)
		line, seen := first[name]
		if !seen {
			first[name] = sc.Location.Line
			continue
		}
		out = append(out, fmt.Sprintf("%s:%d: the scenario %q has the name of the one on line %d of this feature: reports name a scenario by its feature and name, so give each a name of its own",
			uri, sc.Location.Line, name, line))
	}
	return out
}

// writtenUnder is what a step has written under it: steps.TakesDocString,
// steps.TakesTable or "" for nothing.
func writtenUnder(node *messages.Step) string {
	switch {
	case node.DocString != nil:
		return steps.TakesDocString
	case node.DataTable != nil:
		return steps.TakesTable
	}
	return ""
}

// argumentProblem says what is wrong with what is written under a step
// that matched d, or "" when it is what the step takes.
func argumentProblem(keyword string, node *messages.Step, d kit.StepDoc, docs []kit.StepDoc) string {
	written := writtenUnder(node)
	step := keyword + " " + node.Text
	switch {
	case written == d.Takes:
		return ""
	case written == "":
		return fmt.Sprintf("the step `%s` takes %s, and none is written under it%s", step, d.Takes, exampleUnder(keyword, node.Text, d))
	case d.Takes == "":
		hint := "remove it"
		if written == steps.TakesTable {
			hint += " (no step of the library takes a table; an outline's rows go under `Examples:`)"
		}
		if near := takers(node.Text, written, docs); len(near) > 0 {
			hint += ", or use a step that takes one; did you mean:"
			for _, n := range near {
				hint += "\n      " + keyword + " " + n
			}
		}
		return fmt.Sprintf("the step `%s` takes no %s, and %s is written under it: %s", step, noun(written), written, hint)
	}
	return fmt.Sprintf("the step `%s` takes %s, not %s%s", step, d.Takes, written, exampleUnder(keyword, node.Text, d))
}

// noun is "a doc string" without its article.
func noun(what string) string { return strings.TrimPrefix(what, "a ") }

// exampleUnder shows the author's step with what its catalogue example has
// under it, ready to paste.
func exampleUnder(keyword, text string, d kit.StepDoc) string {
	_, below, ok := strings.Cut(d.Example, "\n")
	if !ok {
		return ""
	}
	return fmt.Sprintf(": write one under the step, as in:\n      %s %s\n      %s", keyword, text, strings.ReplaceAll(below, "\n", "\n      "))
}

// takers are the library steps that take what, closest to text first: a
// step that takes a doc string often reads as one that does not with
// " with JSON:" added, so one that text begins is offered before one
// close in wording.
func takers(text, what string, docs []kit.StepDoc) []string {
	var cands []kit.StepDoc
	for _, d := range docs {
		if d.Takes == what {
			cands = append(cands, d)
		}
	}
	var out []string
	for _, d := range cands {
		first, _, _ := strings.Cut(d.Example, "\n")
		_, ex, _ := strings.Cut(first, " ")
		filled := fillValues(ex, text)
		if strings.HasPrefix(shape(filled), strings.TrimSuffix(shape(text), ":")) && regexp.MustCompile(d.Pattern).MatchString(filled) {
			out = append(out, filled)
		}
	}
	if len(out) == 0 {
		out = closeSteps(text, cands)
	}
	return out[:min(len(out), maxSuggestions)]
}

// inlineArgument says how to write an undefined step that is a step taking
// a doc string with the doc string written after its colon, on its line;
// "" when it is not.
func inlineArgument(library *steps.Library, keyword, text string) string {
	for i, r := range text {
		if r != ':' {
			continue
		}
		step := text[:i+1]
		if m := library.Matching(step); len(m) != 1 || m[0].Takes != steps.TakesDocString {
			continue
		}
		arg := strings.TrimSpace(text[i+1:])
		if len(arg) > 1 && arg[0] == '\'' && arg[len(arg)-1] == '\'' {
			arg = arg[1 : len(arg)-1]
		}
		return fmt.Sprintf("; the step `%s` takes its argument as a doc string, on the lines under it:\n      %s %s\n        \"\"\"\n        %s\n        \"\"\"", step, keyword, step, arg)
	}
	return ""
}
