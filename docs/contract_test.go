package docs

import (
	"slices"
	"strings"
	"testing"
)

// TestContractParses holds the page built into the package to its own form:
// any mistake in contract.md fails here, with its line.
func TestContractParses(t *testing.T) {
	rules, err := parse(contract)
	if err != nil {
		t.Fatal(err)
	}
	levels := map[string]int{}
	for _, r := range rules {
		levels[r.Level]++
	}
	for _, level := range []string{Must, Should, Sandbox} {
		if levels[level] == 0 {
			t.Errorf("contract.md has no %s rule", level)
		}
	}
}

// TestLevelsAreThePagesLevels holds Must, Should and Sandbox to the levels
// contract.md's table "Levels and coverage" defines for its readers, so that
// the page and the code that checks its rules name the same ones.
func TestLevelsAreThePagesLevels(t *testing.T) {
	_, section, found := strings.Cut(string(contract), "\n## Levels and coverage\n")
	if !found {
		t.Fatal(`contract.md has no section "## Levels and coverage"`)
	}
	section, _, _ = strings.Cut(section, "\n#")
	var defined []string
	for _, line := range strings.Split(section, "\n") {
		if cells := splitRow(line); strings.HasPrefix(line, "|") && len(cells) > 1 && !isSeparator(cells) && cells[0] != "level" {
			defined = append(defined, strings.Trim(cells[0], "`"))
		}
	}
	if want := []string{Must, Should, Sandbox}; !slices.Equal(defined, want) {
		t.Errorf("contract.md defines the levels %q, the package %q", defined, want)
	}
}

func TestRulesAndLookup(t *testing.T) {
	rules := Rules()
	if len(rules) == 0 {
		t.Fatal("Rules() is empty")
	}
	first := rules[0]
	got, ok := Lookup(first.ID)
	if !ok || got != first {
		t.Errorf("Lookup(%q) = %+v, %v; want %+v, true", first.ID, got, ok, first)
	}
	if _, ok := Lookup("NOPE-1"); ok {
		t.Error("Lookup of an ID the page does not have found a rule")
	}
	rules[0].Text = "changed by a caller"
	if Rules()[0].Text == "changed by a caller" {
		t.Error("a caller changing what Rules returned changed the catalogue")
	}
}

func TestParseReadsRows(t *testing.T) {
	page := "# Title\n\nProse.\n\n## Faults (FAULT)\n\n" +
		"| ID | level | rule | source |\n|---|---|---|---|\n" +
		"| FAULT-1 | sandbox | A `count` of 1 \\| 2 hits. | sandbox contract |\n" +
		"| FAULT-2 | must | Stated. | spec §4, §7 |\n\n" +
		"Prose after the table, and a fence:\n\n```sh\n- FAULT-9 not a rule inside a fence\n```\n"
	rules, err := parse([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{
		{ID: "FAULT-1", Level: Sandbox, Area: "Faults", Text: "A `count` of 1 | 2 hits.", Source: SandboxSource},
		{ID: "FAULT-2", Level: Must, Area: "Faults", Text: "Stated.", Source: "spec §4, §7"},
	}
	if len(rules) != len(want) {
		t.Fatalf("got %d rules %+v, want %+v", len(rules), rules, want)
	}
	for i := range want {
		if rules[i] != want[i] {
			t.Errorf("rule %d = %+v, want %+v", i, rules[i], want[i])
		}
	}
}

func TestParseRefusesMistakes(t *testing.T) {
	const head = "## Faults (FAULT)\n\n| ID | level | rule | source |\n|---|---|---|---|\n"
	const good = "| FAULT-1 | sandbox | A rule. | sandbox contract |\n"
	tests := []struct {
		name, page, want string
	}{
		{"duplicate ID", head + good + "| FAULT-1 | sandbox | Again. | sandbox contract |\n", "contract.md:6: duplicate rule ID FAULT-1, first on line 5"},
		{"duplicate ID across areas", head + good + "\n## More faults (MORE)\n\n| ID | level | rule | source |\n|---|---|---|---|\n| FAULT-1 | sandbox | x | sandbox contract |\n", "is in the area of prefix MORE"},
		{"unknown level", head + "| FAULT-1 | may | A rule. | sandbox contract |\n", `has level "may"`},
		{"missing source", head + "| FAULT-1 | sandbox | A rule. | |\n", `its source is "sandbox contract", not ""`},
		{"must without a spec section", head + "| FAULT-1 | must | A rule. | sandbox contract |\n", `its source is a section of the spec`},
		{"three cells", head + "| FAULT-1 | sandbox | A rule. |\n", "this row has 3"},
		{"unescaped bar", head + "| FAULT-1 | sandbox | a|b | sandbox contract |\n", "this row has 5"},
		{"malformed ID", head + "| FAULT-01 | sandbox | A rule. | sandbox contract |\n", `rule ID "FAULT-01" is not`},
		{"ID of another area", head + "| ENV-1 | sandbox | A rule. | sandbox contract |\n", "rule ID ENV-1 is in the area of prefix FAULT"},
		{"empty text", head + "| FAULT-1 | sandbox |  | sandbox contract |\n", "rule FAULT-1 has no text"},
		{"rule as a list item", head + good + "\n- FAULT-2 (sandbox): a rule in a list.\n", "contract.md:7: this looks like a rule"},
		{"rule as bold paragraph", head + good + "\n**FAULT-2** must: a rule.\n", "this looks like a rule"},
		{"rule outside an area", "## Notes\n\n| ID | level | rule | source |\n|---|---|---|---|\n| FAULT-1 | sandbox | x | sandbox contract |\n", "rule FAULT-1 is outside an area"},
		{"wrong table header", "## Faults (FAULT)\n\n| id | rule |\n|---|---|\n" + good, "starts with the header"},
		{"area without rules", head + good + "\n## Empty (EMPTY)\n\nNothing here.\n", `area "Empty" has no rules`},
		{"prefix used twice", head + good + "\n## Faults again (FAULT)\n\n| ID | level | rule | source |\n|---|---|---|---|\n| FAULT-2 | sandbox | x | sandbox contract |\n", "area prefix FAULT is already used on line 1"},
		{"no rules at all", "# Nothing\n", "no rules"},
		{"open fence", head + good + "```\n", "a code fence is not closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse([]byte(tt.page))
			if err == nil {
				t.Fatalf("parse accepted:\n%s", tt.page)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

// TestClientRulesStandApart keeps the client rules out of what a deployment
// is held to, and gives the verdict the catalogue the issue asks for.
func TestClientRulesStandApart(t *testing.T) {
	client := ClientRules()
	if len(client) < 10 {
		t.Errorf("contract.md has %d client rules, want at least 10", len(client))
	}
	for _, r := range client {
		if !strings.HasPrefix(r.ID, ClientPrefix+"-") {
			t.Errorf("client rule %s is outside the %s area", r.ID, ClientPrefix)
		}
		if _, ok := Lookup(r.ID); ok {
			t.Errorf("Lookup found client rule %s among the API's rules", r.ID)
		}
		if got, ok := LookupClient(r.ID); !ok || got != r {
			t.Errorf("LookupClient(%q) = %+v, %v", r.ID, got, ok)
		}
		if !strings.Contains(r.Text, "Judged on") {
			t.Errorf("client rule %s does not say what it is judged on", r.ID)
		}
	}
	for _, r := range Rules() {
		if strings.HasPrefix(r.ID, ClientPrefix+"-") {
			t.Errorf("Rules() holds client rule %s", r.ID)
		}
	}
}
