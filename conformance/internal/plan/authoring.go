package plan

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	messages "github.com/cucumber/messages/go/v21"

	"github.com/testcampaign/kit/conformance/internal/coverage"
	"github.com/testcampaign/kit/conformance/internal/steps"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/docs"
)

// Mistakes that only the whole scenario shows: a tag that is almost one the
// kit reads, a step that needs a tag the scenario lacks, and a step that
// needs an earlier one. Each passes godog's own parsing and would run,
// silently doing something else than its author meant.

// ruleIDRe is the shape of a rule ID of docs/contract.md as a tag.
var ruleIDRe = regexp.MustCompile(`^@[A-Z]+-[0-9]+$`)

// kitTags are the tags the kit reads: levels and profiles, areas, maturity,
// and the tags that decide where a scenario can run.
var kitTags = sync.OnceValue(func() []string {
	tags := []string{"@" + docs.Must, "@" + docs.Should, tagSandbox, tagStable, tagBeta,
		tagWrites, tagExhaustive, tagSeed, tagDelivery, tagFrozenClock, tagRunningClock}
	for _, a := range kit.AreaOrder {
		tags = append(tags, "@"+a)
	}
	return tags
})

// knownTag says whether a tag is one the kit reads, a rule ID, or one the
// built-in suite carries.
func knownTag(tag string) bool {
	if slices.Contains(kitTags(), tag) || slices.Contains(builtinTags(), tag) {
		return true
	}
	return slices.Contains(coverage.RuleIDs(), strings.TrimPrefix(tag, "@"))
}

// builtinTags are the tags of the built-in suite: an operator's feature
// may borrow any of them.
var builtinTags = sync.OnceValue(func() []string {
	files, err := builtinSuite()
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range files {
		if f.doc == nil || f.doc.Feature == nil {
			continue
		}
		for _, t := range tagNodes(f.doc.Feature) {
			if !slices.Contains(out, t.Name) {
				out = append(out, t.Name)
			}
		}
	}
	return out
})

// tagProblem says what is wrong with a tag the kit does not know, or ""
// for a tag of the author's own, one that resembles nothing the kit reads.
func tagProblem(tag string) string {
	if knownTag(tag) {
		return ""
	}
	if strings.EqualFold(tag, "@"+kit.ProfileSpec) {
		return fmt.Sprintf("%s is no tag of the kit: a profile is chosen with --profile, and a scenario without @sandbox runs under both", tag)
	}
	if ruleIDRe.MatchString(tag) {
		var ids []string
		for _, id := range coverage.RuleIDs() {
			ids = append(ids, "@"+id)
		}
		hint := "; `conform rules` lists them"
		if best, d := closest(tag, ids); best != "" && d <= 2 {
			hint = fmt.Sprintf("; did you mean %s?", best)
		}
		return fmt.Sprintf("the tag %s names no rule of docs/contract.md%s", tag, hint)
	}
	best, d := closest(tag, kitTags())
	switch {
	case best == "":
		return ""
	case d == 0:
		return fmt.Sprintf("unknown tag %s: tags are case-sensitive, did you mean %s?", tag, best)
	case d <= max(1, len(strings.TrimPrefix(tag, "@"))/3):
		return fmt.Sprintf("unknown tag %s: did you mean %s?%s", tag, best, tagMeaning(best))
	}
	return ""
}

// tagMeaning says what a misspelt tag loses, for the tags where that is
// not obvious.
func tagMeaning(tag string) string {
	switch tag {
	case tagSandbox:
		return " (without it the scenario is held to @must and runs under --profile spec too)"
	case "@" + docs.Should:
		return " (without it the scenario is held to @must)"
	}
	return ""
}

// closest is the candidate nearest to tag, ignoring case, and how near.
func closest(tag string, candidates []string) (string, int) {
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(tag), strings.ToLower(c))
		if bestD < 0 || d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	return best, bestD
}

// tagNodes are every tag written in a feature, with its line.
func tagNodes(f *messages.Feature) []*messages.Tag {
	out := slices.Clone(f.Tags)
	scenario := func(sc *messages.Scenario) {
		out = append(out, sc.Tags...)
		for _, ex := range sc.Examples {
			out = append(out, ex.Tags...)
		}
	}
	for _, c := range f.Children {
		if c.Scenario != nil {
			scenario(c.Scenario)
		}
		if c.Rule != nil {
			out = append(out, c.Rule.Tags...)
			for _, rc := range c.Rule.Children {
				if rc.Scenario != nil {
					scenario(rc.Scenario)
				}
			}
		}
	}
	return out
}

// tagLines lints every tag of a feature once, where it is written.
func tagLines(uri string, f *messages.Feature) []string {
	var out []string
	for _, t := range tagNodes(f) {
		if msg := tagProblem(t.Name); msg != "" {
			out = append(out, fmt.Sprintf("%s:%d: %s", uri, t.Location.Line, msg))
		}
	}
	return out
}

// sandboxPathRe finds a control path in a step.
var sandboxPathRe = regexp.MustCompile(`"/_sandbox/[^"]*"`)

// stepNeeds lints one step of a scenario, at where, against the
// scenario's tags and what its earlier steps gave. A control path counts
// in the step's text, where a request goes, not in a body it sends.
func stepNeeds(where string, tags []string, text string, matched []kit.StepDoc, given map[string]bool) []string {
	var out []string
	if !slices.Contains(tags, tagSandbox) {
		if m := sandboxPathRe.FindString(text); m != "" {
			out = append(out, fmt.Sprintf("%s: %s is a control of the sandbox: tag the scenario @sandbox, so that --profile spec leaves it out", where, m))
		}
	}
	for _, d := range matched {
		for _, t := range d.Tags {
			if !slices.Contains(tags, t) {
				out = append(out, fmt.Sprintf("%s: the step `%s` needs the tag %s on its scenario%s", where, text, t, tagReason(t)))
			}
		}
		if d.Needs != "" && !given[d.Needs] {
			out = append(out, fmt.Sprintf("%s: the step `%s` needs %s first, and no earlier step of the scenario makes one: %s", where, text, d.Needs, givers(d.Needs)))
		}
	}
	return out
}

func tagReason(tag string) string {
	switch tag {
	case tagSandbox:
		return " (it uses the sandbox's controls, which --profile spec leaves out by that tag)"
	case tagFrozenClock:
		return " (it moves the account's clock, which only a sandbox started with -frozen-clock does)"
	}
	return ""
}

// givers names the steps that give what, for an author to put first.
func givers(what string) string {
	var out []string
	for _, d := range steps.Steps() {
		if d.Gives == what {
			ex, _, _ := strings.Cut(d.Example, "\n")
			out = append(out, "`"+ex+"`")
		}
	}
	sort.Strings(out)
	return "put " + strings.Join(out, " or ") + " before it"
}

// savedNameRe finds the names of saved values a step reads by name, not
// as a {placeholder}.
var savedNameRe = regexp.MustCompile(`(?:the saved|of the form of) "([^"]+)"`)
