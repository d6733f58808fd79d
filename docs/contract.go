// Package docs holds the project's contract, contract.md, as a catalogue of
// rules: each with a stable ID, a level and a source. The conformance kit
// cites these IDs in its checks and reports coverage per rule, and
// `conform rules` prints the catalogue, so the rules a deployment is held to
// are the ones users read. It uses the standard library only, so that any
// package of the module may import it.
package docs

import (
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Levels of a rule, as contract.md's table "Levels and coverage" defines
// them; the conformance kit's tags and reports take them from here.
const (
	// Must rules are stated by the published spec.
	Must = "must"
	// Should rules are plain HTTP and JSON semantics the spec implies.
	Should = "should"
	// Sandbox rules are the sandbox's documented choices, which a live
	// deployment may not share.
	Sandbox = "sandbox"
)

// SandboxSource is the source of every sandbox rule.
const SandboxSource = "sandbox contract"

// Rule is one checkable statement of the contract.
type Rule struct {
	// ID is the rule's stable name, its area's prefix and a number: FAULT-7.
	ID string
	// Level is Must, Should or Sandbox.
	Level string
	// Area is the title of the rule's section: "Faults".
	Area string
	// Text is the rule as written, in Markdown.
	Text string
	// Source is the section of the spec that states or implies the rule
	// ("spec §4, §7"), or SandboxSource.
	Source string
}

//go:embed contract.md
var contract []byte

// ClientPrefix is the ID prefix of the client rules: rules of an SDK or a
// webhook receiver, which the sandbox's verdict judges, not of a
// deployment, which the conformance kit judges.
const ClientPrefix = "CLI"

var catalogue = sync.OnceValues(func() ([]Rule, error) { return parse(contract) })

// split is the catalogue as the API's rules and the client rules, each in
// the order of the page.
var split = sync.OnceValue(func() (parts struct{ api, client []Rule }) {
	rules, err := catalogue()
	if err != nil {
		panic(err)
	}
	for _, r := range rules {
		if isClientRule(r) {
			parts.client = append(parts.client, r)
		} else {
			parts.api = append(parts.api, r)
		}
	}
	return parts
})

// isClientRule reports whether a rule holds a client rather than the API.
func isClientRule(r Rule) bool {
	return strings.HasPrefix(r.ID, ClientPrefix+"-")
}

// Rules returns every rule of the API in contract.md, in the order the page
// gives them: the client rules are left out, a deployment being held to
// none of them. It panics if the page does not parse, which the package's
// tests rule out for the page built in.
func Rules() []Rule {
	return slices.Clone(split().api)
}

// ClientRules returns the client rules of contract.md, in the order the page
// gives them: what the sandbox's verdict judges an SDK and its webhook
// receiver by.
func ClientRules() []Rule {
	return slices.Clone(split().client)
}

// Lookup returns the rule of the API with the given ID.
func Lookup(id string) (Rule, bool) {
	return lookup(split().api, id)
}

// LookupClient returns the client rule with the given ID.
func LookupClient(id string) (Rule, bool) {
	return lookup(split().client, id)
}

func lookup(rules []Rule, id string) (Rule, bool) {
	i := slices.IndexFunc(rules, func(r Rule) bool { return r.ID == id })
	if i < 0 {
		return Rule{}, false
	}
	return rules[i], true
}

var (
	// areaHeading opens a section of rules: "## Faults (FAULT)".
	areaHeading = regexp.MustCompile(`^## (\S.*) \(([A-Z]+)\)$`)
	ruleID      = regexp.MustCompile(`^([A-Z]+)-([1-9][0-9]*)$`)
	specSource  = regexp.MustCompile(`^spec §[0-9]+(, §[0-9]+)*$`)
	// looksLikeRule catches a rule written in another form than a table
	// row (a list item, a paragraph), which would otherwise be left out of
	// the catalogue without a word.
	looksLikeRule = regexp.MustCompile("^\\s*(?:[-*+]|[0-9]+\\.)?\\s*[*_`]*[A-Z]{2,}-[0-9]+\\b")
)

// tableHeader is the only header a table of rules may have.
var tableHeader = []string{"ID", "level", "rule", "source"}

// parse reads the rules of a contract page. Each area is a "##" heading
// ending in its ID prefix in parentheses, followed by a table of rules; see
// "How this page is written" in contract.md. It returns every mistake it
// finds, each with its line.
func parse(page []byte) ([]Rule, error) {
	var (
		rules              []Rule
		errs               []error
		area, prefix       string
		inFence, inTable   bool
		areaLine, areaSize int
		seenIDs            = map[string]int{}
		seenPrefixes       = map[string]int{}
	)
	fail := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("contract.md:%d: %s", line, fmt.Sprintf(format, args...)))
	}
	endArea := func() {
		if prefix != "" && areaSize == 0 {
			fail(areaLine, "area %q has no rules", area)
		}
	}
	lines := strings.Split(string(page), "\n")
	for i, text := range lines {
		line := i + 1
		text = strings.TrimRight(text, "\r")
		if strings.HasPrefix(strings.TrimSpace(text), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if strings.HasPrefix(text, "#") {
			inTable = false
			if !strings.HasPrefix(text, "## ") {
				continue
			}
			endArea()
			area, prefix, areaLine, areaSize = "", "", line, 0
			if m := areaHeading.FindStringSubmatch(text); m != nil {
				area, prefix = m[1], m[2]
				if first, ok := seenPrefixes[prefix]; ok {
					fail(line, "area prefix %s is already used on line %d", prefix, first)
				}
				seenPrefixes[prefix] = line
			}
			continue
		}
		if !strings.HasPrefix(strings.TrimSpace(text), "|") {
			inTable = false
			if looksLikeRule.MatchString(text) {
				fail(line, "this looks like a rule but is not a row of a rules table: %q", text)
			}
			continue
		}
		cells := splitRow(text)
		if prefix == "" {
			if len(cells) > 0 && ruleID.MatchString(cells[0]) {
				fail(line, "rule %s is outside an area of rules (a \"## Title (PREFIX)\" heading)", cells[0])
			}
			continue
		}
		if !inTable {
			if !slices.EqualFunc(cells, tableHeader, strings.EqualFold) {
				fail(line, "a table of rules starts with the header | %s |", strings.Join(tableHeader, " | "))
			}
			inTable = true
			continue
		}
		if isSeparator(cells) {
			continue
		}
		rule, problems := parseRow(cells, area, prefix)
		for _, p := range problems {
			fail(line, "%s", p)
		}
		if len(problems) > 0 {
			continue
		}
		if first, ok := seenIDs[rule.ID]; ok {
			fail(line, "duplicate rule ID %s, first on line %d", rule.ID, first)
			continue
		}
		seenIDs[rule.ID] = line
		areaSize++
		rules = append(rules, rule)
	}
	endArea()
	if inFence {
		fail(len(lines), "a code fence is not closed")
	}
	if len(rules) == 0 && len(errs) == 0 {
		fail(1, "no rules")
	}
	return rules, errors.Join(errs...)
}

// parseRow makes a rule of a table row, or says what is wrong with it.
func parseRow(cells []string, area, prefix string) (Rule, []string) {
	if len(cells) != len(tableHeader) {
		return Rule{}, []string{fmt.Sprintf("a rule has %d cells (ID, level, rule, source), this row has %d: is a | in its text not written \\|?", len(tableHeader), len(cells))}
	}
	r := Rule{ID: cells[0], Level: cells[1], Area: area, Text: cells[2], Source: cells[3]}
	var problems []string
	if m := ruleID.FindStringSubmatch(r.ID); m == nil {
		problems = append(problems, fmt.Sprintf("rule ID %q is not a prefix and a number such as %s-1", r.ID, prefix))
	} else if m[1] != prefix {
		problems = append(problems, fmt.Sprintf("rule ID %s is in the area of prefix %s", r.ID, prefix))
	}
	if r.Text == "" {
		problems = append(problems, fmt.Sprintf("rule %s has no text", r.ID))
	}
	switch r.Level {
	case Must, Should:
		if !specSource.MatchString(r.Source) {
			problems = append(problems, fmt.Sprintf("rule %s is %s, so its source is a section of the spec such as \"spec §4\" or \"spec §4, §7\", not %q", r.ID, r.Level, r.Source))
		}
	case Sandbox:
		if r.Source != SandboxSource {
			problems = append(problems, fmt.Sprintf("rule %s is a sandbox rule, so its source is %q, not %q", r.ID, SandboxSource, r.Source))
		}
	default:
		problems = append(problems, fmt.Sprintf("rule %s has level %q; the levels are %s, %s and %s", r.ID, r.Level, Must, Should, Sandbox))
	}
	return r, problems
}

// splitRow returns the trimmed cells of a Markdown table row, with each
// escaped \| made a | of the cell's text.
func splitRow(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cell.WriteByte('|')
			i++
		case row[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(row[i])
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

// isSeparator reports whether a row is a table's |---|---| line.
func isSeparator(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, ":-") != "" || !strings.Contains(c, "-") {
			return false
		}
	}
	return true
}
