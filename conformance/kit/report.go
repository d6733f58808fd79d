// Package kit is the conformance kit's vocabulary: the Config a run takes,
// the Report it returns with every scenario's result and every rule's
// outcome, and the writers of that report for people and CI (the summary,
// junit, cucumber JSON and HTML); beside them the OpenAPI checker a run
// can be given, and the documentation of the step library. Package
// conformance runs the kit with these types. This package imports nothing
// else of the kit, so that every part of it can take and hand back the
// very types a caller reads here.
package kit

import (
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/testcampaign/kit/docs"
)

// Status is the outcome of one scenario. Statuses are ranked, worst last, so
// that a run's result is the worst of its scenarios: disabled < skip < pass
// < warn < fail < error.
type Status int

// The ranked outcomes.
const (
	// Disabled: kept out by the run's configuration (the profile, the key
	// type, an opt-in not given, the receiver switched off). Nothing was
	// lost that the operator did not ask to leave out.
	Disabled Status = iota
	// Skipped: selected and allowed, but it could not run here (the key's
	// budget, a deployment refusing the receiver, a seed it does not hold).
	// This is lost coverage, which --fail-on-skip turns into a failure.
	Skipped
	// Passed: every step held.
	Passed
	// Warned: a @should scenario failed and the run is not strict.
	Warned
	// Failed: the deployment deviates from what the scenario checks.
	Failed
	// Errored: the kit could not judge (no connection, undefined step).
	Errored
)

func (s Status) String() string {
	switch s {
	case Disabled:
		return "disabled"
	case Skipped:
		return "skipped"
	case Passed:
		return "passed"
	case Warned:
		return "warning"
	case Failed:
		return "failed"
	case Errored:
		return "error"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// ScenarioResult is what the run found for one scenario (one row of an
// outline counts as one scenario).
type ScenarioResult struct {
	Feature string // the name of the scenario's feature
	// URI and Line are where the scenario is written: its feature file,
	// as the run names it (features/auth.feature for a built-in one), and
	// the line of its header, or of its row of an outline's examples.
	URI  string
	Line int
	Name string
	Tags []string // its tags and its feature's, @ included
	// Area is the part of the API it checks: its tag of AreaOrder
	// (@auth, @campaigns…), else its file's name; AreaSchema when it
	// failed for an exchange that breaks the OpenAPI document.
	Area string
	// Level is its tags' level: docs.Must, docs.Should or docs.Sandbox.
	Level string
	// Maturity is how settled the behaviour it checks is, by its tags:
	// "stable", "beta", or empty for neither.
	Maturity string
	Status   Status
	// SkipReason says why a Disabled or Skipped scenario did not run.
	SkipReason string
	// FailedStep is the step that did not hold: what the spec wanted.
	// FailedLine is its line in URI, 0 when it has none (the explorer's).
	FailedStep string
	FailedLine int
	// Message explains the failure, with a diff where values differ.
	Message string
	// Request and Response describe the exchange at fault, with the key
	// redacted: the one the failing step judged, or the one that broke a
	// rule of every response.
	Request  string
	Response string
	// Rule names the rule of every response that failed the scenario when
	// its steps held; RuleLevel is that rule's level, which decides between
	// failure and warning.
	Rule      string
	RuleLevel string
	// Exchanges are the scenario's requests and answers in order, redacted
	// and bounded, for the junit and HTML reports of a failure.
	Exchanges []string
	Duration  time.Duration
	// Steps are the scenario's steps as they ran, for the cucumber report.
	Steps []StepResult
	// Explored, for the explorer's scenario, is what it sent.
	Explored *Exploration
}

// Exploration is what the explorer did in a run: the seed its requests
// were drawn from and how many it sent, shrinking included.
type Exploration struct {
	Seed     uint64
	Requests int
}

// StepResult is one step of a scenario as it ran.
type StepResult struct {
	Keyword string // "Given ", "When "… as written
	Text    string
	Line    int
	// Status is godog's word for the outcome: passed, failed, skipped,
	// undefined, pending or ambiguous.
	Status   string
	Error    string
	Duration time.Duration
}

// FailedAt is the failing step with its file and line, as a report shows it.
func (r ScenarioResult) FailedAt() string {
	if r.FailedLine == 0 {
		return r.FailedStep
	}
	return fmt.Sprintf("%s  (%s:%d)", r.FailedStep, r.URI, r.FailedLine)
}

// Location is the scenario's file and line, as editors understand it.
func (r ScenarioResult) Location() string { return fmt.Sprintf("%s:%d", r.URI, r.Line) }

// Settings is the effective configuration of a run, recorded in every report
// so that a result can be read, and repeated, without the job that made it.
type Settings struct {
	Tags        string
	Profile     string
	Strict      bool
	FailOnSkip  bool
	FeatureDirs []string
	NoBuiltin   bool
	OpenAPI     string
	Concurrency int
	Exhaustive  bool
	AllowWrites bool
	// Seed drives the run's generated requests; the same seed sends the
	// same ones.
	Seed uint64
	// ExplorerOnly is a run of the explorer alone (conform explore), which
	// runs no features.
	ExplorerOnly bool
}

// pairs lists the settings as name=value, in a fixed order.
func (s Settings) pairs() [][2]string {
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	dirs := strings.Join(s.FeatureDirs, ",")
	switch {
	case s.ExplorerOnly:
		dirs = "(none: the explorer alone)"
	case !s.NoBuiltin:
		dirs = strings.Join(append([]string{"(built-in)"}, s.FeatureDirs...), ",")
	}
	openapi := s.OpenAPI
	if openapi == "" {
		openapi = "off"
	}
	tags := s.Tags
	if tags == "" {
		tags = "(all)"
	}
	return [][2]string{
		{"profile", s.Profile}, {"tags", tags}, {"strict", onOff(s.Strict)}, {"fail-on-skip", onOff(s.FailOnSkip)},
		{"features", dirs}, {"openapi", openapi}, {"concurrency", fmt.Sprint(s.Concurrency)},
		{"exhaustive", onOff(s.Exhaustive)}, {"allow-writes", onOff(s.AllowWrites)},
		{"seed", fmt.Sprint(s.Seed)},
	}
}

func (s Settings) String() string {
	var parts []string
	for _, p := range s.pairs() {
		parts = append(parts, p[0]+"="+p[1])
	}
	return strings.Join(parts, "  ")
}

// Report is the outcome of one run.
type Report struct {
	// Version names the build of conform that wrote the report, if known.
	Version string
	BaseURL string // the deployment's root, Config.BaseURL
	Key     string // Config.APIKey, redacted
	// Settings are the run's effective configuration.
	Settings Settings
	Started  time.Time
	Duration time.Duration
	// Scenarios are those that finished, and those kept out of the run.
	Scenarios []ScenarioResult
	// Stopped, when set, says why the run ended before judging everything:
	// the deployment could not be reached, or the run was interrupted.
	// Such a run exits 2, whatever the scenarios that finished found.
	Stopped string
	// Unfinished counts the scenarios an interruption left without a verdict.
	Unfinished int
	// Files are the report files written besides the summary, so that the
	// summary can say where the whole list is.
	Files []string
	// Coverage is every rule of docs/contract.md with how the run ended
	// for it: checked, not exercised, or not applicable.
	Coverage []Outcome
	// Unchecked says what the run did not check that it would normally
	// check, and why (the model could not read what a fresh account holds,
	// say), so that a pass never hides a gap.
	Unchecked []string
}

// Result is the worst status of the run; a run with nothing to judge is
// Disabled.
func (r *Report) Result() Status {
	worst := Disabled
	for _, s := range r.Scenarios {
		if s.Status > worst {
			worst = s.Status
		}
	}
	return worst
}

// Exit codes of the conform command.
const (
	ExitConformant = 0
	ExitDeviations = 1
	ExitError      = 2
)

// ExitCode maps the result to the command's exit status: warnings and
// disabled scenarios still conform, and so do skipped ones unless
// --fail-on-skip says that lost coverage fails the run.
func (r *Report) ExitCode() int {
	switch res := r.Result(); {
	case r.Stopped != "" || res == Errored:
		return ExitError
	case res == Failed:
		return ExitDeviations
	case r.Settings.FailOnSkip && r.Count(Skipped) > 0:
		return ExitDeviations
	}
	return ExitConformant
}

// With returns the scenarios having the given status.
func (r *Report) With(st Status) []ScenarioResult {
	var out []ScenarioResult
	for _, s := range r.Scenarios {
		if s.Status == st {
			out = append(out, s)
		}
	}
	return out
}

// Count is how many scenarios have the given status.
func (r *Report) Count(st Status) int { return len(r.With(st)) }

// verdict is the one-line judgement every report leads with.
func (r *Report) verdict() string {
	switch {
	case r.Stopped != "":
		return "ERROR (" + r.Stopped + ")"
	case r.ExitCode() == ExitDeviations && r.Result() < Failed:
		return "NOT CONFORMANT (--fail-on-skip: scenarios were skipped)"
	}
	return map[Status]string{
		Disabled: "NOTHING RUN", Skipped: "NOTHING RUN", Passed: "CONFORMANT", Warned: "CONFORMANT (with warnings)",
		Failed: "NOT CONFORMANT", Errored: "ERROR (could not judge)",
	}[r.Result()]
}

// Selected is how many scenarios the run selected: every one but those its
// configuration disabled. It is the one scenario count of every report.
func (r *Report) Selected() int { return len(r.Scenarios) - r.Count(Disabled) }

// Counts is the run's tally as every report states it: the selected
// scenarios by outcome, then the disabled ones apart, since they were never
// meant to run.
func (r *Report) Counts() string {
	s := fmt.Sprintf("%d scenarios: %d passed, %d failed, %d warnings, %d errors, %d skipped",
		r.Selected(), r.Count(Passed), r.Count(Failed), r.Count(Warned), r.Count(Errored), r.Count(Skipped))
	if r.Unfinished > 0 {
		s += fmt.Sprintf(", %d unfinished", r.Unfinished)
	}
	return s + fmt.Sprintf("; %d disabled", r.Count(Disabled))
}

// maxGroups keeps the summary short enough to read at a glance; the full
// list is in the report files.
const maxGroups = 15

// WriteSummary writes the human summary: the verdict, a table per area and
// level, then the failures grouped by cause, each with its step, the
// exchange at fault and what came back, then what was skipped and why.
func (r *Report) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "\n%s %s  key=%s\n%s\n", r.suiteName(), r.BaseURL, r.Key, r.Settings)
	fmt.Fprintf(w, "RESULT: %s: %s in %s\n", r.verdict(), r.Counts(), r.Duration.Round(time.Millisecond))
	if len(r.Coverage) > 0 {
		fmt.Fprintf(w, "RULES: %s (docs/contract.md; the HTML and junit reports list each rule)\n", r.coverageCounts())
	}
	for _, s := range r.Scenarios {
		if e := s.Explored; e != nil {
			fmt.Fprintf(w, "EXPLORER: %d requests from seed %d, judged by the model (--seed %d sends them again), %s\n", e.Requests, e.Seed, e.Seed, s.Status)
		}
	}
	fmt.Fprintln(w)

	fmt.Fprintf(w, "%-12s %-8s %6s %6s %6s %6s %6s %8s\n", "AREA", "LEVEL", "PASS", "FAIL", "WARN", "ERROR", "SKIP", "DISABLED")
	for _, row := range r.table() {
		fmt.Fprintf(w, "%-12s %-8s %6d %6d %6d %6d %6d %8d\n", row.area, row.level, row.n[Passed], row.n[Failed], row.n[Warned], row.n[Errored], row.n[Skipped], row.n[Disabled])
	}

	r.writeProblems(w, "FAILURES", r.With(Failed))
	r.writeProblems(w, "ERRORS (the kit could not judge these)", r.With(Errored))
	r.writeProblems(w, "WARNINGS (@should; --strict makes them failures)", r.With(Warned))
	writeReasons(w, "SKIPPED (could not run here; --fail-on-skip fails the run on these)", r.With(Skipped))
	writeReasons(w, "DISABLED (left out by this run's configuration)", r.With(Disabled))
	r.writeUnexercised(w)
	if len(r.Unchecked) > 0 {
		fmt.Fprintf(w, "\nNOT CHECKED (the run could not judge these as it normally does)\n")
		for _, u := range r.Unchecked {
			fmt.Fprintf(w, "  - %s\n", u)
		}
	}
}

// coverageCounts says how the run ended for the rules of the catalogue.
func (r *Report) coverageCounts() string {
	checked, notExercised, notApplicable := totals(r.Coverage)
	return fmt.Sprintf("%d checked, %d not exercised, %d not applicable, of %d", checked, notExercised, notApplicable, len(r.Coverage))
}

// writeUnexercised lists the rules no exchange of the run reached: lost
// coverage, said with its reason where the run knows one.
func (r *Report) writeUnexercised(w io.Writer) {
	var lines []string
	for _, o := range r.Coverage {
		if o.State != NotExercised {
			continue
		}
		line := "  " + o.Rule.ID
		if o.Reason != "" {
			line += ": " + o.Reason
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\nRULES NOT EXERCISED (%d; nothing in the run reached them)\n", len(lines))
	const shown = 20
	if len(lines) > shown {
		lines = append(lines[:shown], fmt.Sprintf("  … and %d more: %s", len(lines)-shown, r.whereAll()))
	}
	fmt.Fprintln(w, strings.Join(lines, "\n"))
}

// reasonCount is how many scenarios one reason kept from running.
type reasonCount struct {
	reason string
	n      int
}

// reasonCounts groups scenarios by why they did not run, in the order the
// reasons first appear.
func reasonCounts(list []ScenarioResult) []reasonCount {
	index := map[string]int{}
	var out []reasonCount
	for _, s := range list {
		i, ok := index[s.SkipReason]
		if !ok {
			i = len(out)
			index[s.SkipReason] = i
			out = append(out, reasonCount{reason: s.SkipReason})
		}
		out[i].n++
	}
	return out
}

func writeReasons(w io.Writer, title string, list []ScenarioResult) {
	reasons := reasonCounts(list)
	if len(reasons) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", title)
	for _, r := range reasons {
		fmt.Fprintf(w, "  %3d  %s\n", r.n, r.reason)
	}
}

// failureGroup is one cause shared by several scenarios.
type failureGroup struct {
	cause string
	list  []ScenarioResult
}

// causeRe finds the rule a message names first ("envelope rule (spec §4)").
var causeRe = regexp.MustCompile(`^([a-z -]+ rule(?: \([^)]*\))?)`)

// causeOf is what failures share when they have one root: the rule of every
// response they broke, else the rule the message names, else the step.
func causeOf(s ScenarioResult) string {
	if s.Rule != "" {
		return s.Rule
	}
	if s.Status == Errored && strings.Contains(s.Message, ErrConnection.Error()+": ") {
		// One deployment out of reach, whichever step found it.
		return "no answer from the deployment (" + ErrConnection.Error() + ")"
	}
	if m := causeRe.FindString(s.Message); m != "" {
		return m
	}
	return "step: " + s.FailedStep + ": " + firstLine(s.Message)
}

func groupFailures(list []ScenarioResult) []failureGroup {
	index := map[string]int{}
	var groups []failureGroup
	for _, s := range list {
		c := causeOf(s)
		i, ok := index[c]
		if !ok {
			i = len(groups)
			index[c] = i
			groups = append(groups, failureGroup{cause: c})
		}
		groups[i].list = append(groups[i].list, s)
	}
	return groups
}

func (r *Report) writeProblems(w io.Writer, title string, list []ScenarioResult) {
	if len(list) == 0 {
		return
	}
	groups := groupFailures(list)
	fmt.Fprintf(w, "\n%s (%d in %d scenario(s))\n", title, len(groups), len(list))
	for i, g := range groups {
		if i == maxGroups {
			fmt.Fprintf(w, "  … and %d more cause(s) in %d scenario(s): %s\n", len(groups)-maxGroups, countIn(groups[maxGroups:]), r.whereAll())
			break
		}
		s := g.list[0]
		if len(g.list) > 1 {
			fmt.Fprintf(w, "%2d. %s broken in %d scenarios: first at [%s] %s: %s  (%s)\n", i+1, g.cause, len(g.list), s.Level, s.Area, s.Name, s.Location())
		} else {
			fmt.Fprintf(w, "%2d. [%s] %s: %s  (%s)\n", i+1, s.Level, s.Area, s.Name, s.Location())
		}
		if s.FailedStep != "" {
			fmt.Fprintf(w, "    step:    %s\n", s.FailedAt())
		}
		if s.Request != "" {
			fmt.Fprintf(w, "    request: %s\n", s.Request)
		}
		fmt.Fprintf(w, "    why:     %s\n", indent(s.Message, "             "))
		if s.Response != "" {
			fmt.Fprintf(w, "    got:     %s\n", s.Response)
		}
		if n := len(g.list) - 1; n > 0 {
			var locs []string
			for _, o := range g.list[1:min(len(g.list), 4)] {
				locs = append(locs, o.Location())
			}
			more := ""
			if n > 3 {
				more = fmt.Sprintf(" and %d more; %s", n-3, r.whereAll())
			}
			fmt.Fprintf(w, "    also in: %s%s\n", strings.Join(locs, ", "), more)
		}
	}
}

func countIn(groups []failureGroup) int {
	n := 0
	for _, g := range groups {
		n += len(g.list)
	}
	return n
}

// whereAll names the report files that list every scenario, or says how to
// get one.
func (r *Report) whereAll() string {
	if len(r.Files) == 0 {
		return "every one is listed by --junit FILE or --html FILE"
	}
	return "every one is listed in " + strings.Join(r.Files, " and ")
}

func indent(s, pad string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n"+pad)
}

type tableRow struct {
	area, level string
	n           [Errored + 1]int
}

// table counts outcomes per area and level, areas in the built-in order and
// then alphabetically, levels from must to sandbox.
func (r *Report) table() []tableRow {
	rank := map[string]int{}
	for i, a := range AreaOrder {
		rank[a] = i
	}
	levelRank := map[string]int{docs.Must: 0, docs.Should: 1, docs.Sandbox: 2}
	rows := map[[2]string]*tableRow{}
	for _, s := range r.Scenarios {
		k := [2]string{s.Area, s.Level}
		if rows[k] == nil {
			rows[k] = &tableRow{area: s.Area, level: s.Level}
		}
		rows[k].n[s.Status]++
	}
	out := make([]tableRow, 0, len(rows))
	for _, row := range rows {
		out = append(out, *row)
	}
	sort.Slice(out, func(i, j int) bool {
		ai, aok := rank[out[i].area]
		aj, bok := rank[out[j].area]
		switch {
		case out[i].area == out[j].area:
			return levelRank[out[i].level] < levelRank[out[j].level]
		case aok && bok:
			return ai < aj
		case aok != bok:
			return aok
		}
		return out[i].area < out[j].area
	})
	return out
}

type junitSuites struct {
	XMLName    xml.Name        `xml:"testsuites"`
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties *junitPropsList `xml:"properties,omitempty"`
	Suites     []junitSuite    `xml:"testsuite"`
}

type junitPropsList struct {
	Props []junitProp `xml:"property"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties *junitPropsList `xml:"properties,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// suiteName is "conform", followed by the build when it is known.
func (r *Report) suiteName() string {
	if r.Version == "" {
		return "conform"
	}
	return "conform " + r.Version
}

// properties are the effective configuration, for the junit report; with
// rules, also how the run ended for each rule of the catalogue, which only
// the report's top level carries.
func (r *Report) properties(rules bool) *junitPropsList {
	props := []junitProp{{"version", r.suiteName()}, {"base-url", r.BaseURL}, {"key", r.Key}}
	for _, p := range r.Settings.pairs() {
		props = append(props, junitProp{p[0], p[1]})
	}
	if r.Stopped != "" {
		props = append(props, junitProp{"stopped", r.Stopped})
	}
	if rules && len(r.Coverage) > 0 {
		checked, notExercised, notApplicable := totals(r.Coverage)
		props = append(props, junitProp{"rules.checked", fmt.Sprint(checked)}, junitProp{"rules.not-exercised", fmt.Sprint(notExercised)}, junitProp{"rules.not-applicable", fmt.Sprint(notApplicable)})
		for _, o := range r.Coverage {
			props = append(props, junitProp{"rule." + o.Rule.ID, o.Summary()})
		}
	}
	if rules {
		props = append(props, junitProp{"scenarios", fmt.Sprint(r.Selected())}, junitProp{"disabled", fmt.Sprint(r.Count(Disabled))})
		for _, d := range reasonCounts(r.With(Disabled)) {
			props = append(props, junitProp{"disabled.reason", fmt.Sprintf("%d: %s", d.n, d.reason)})
		}
	}
	for _, u := range r.Unchecked {
		props = append(props, junitProp{"not-checked", u})
	}
	return &junitPropsList{Props: props}
}

// maxSystemOut bounds the exchanges a junit case carries, so that a
// scenario that polled or walked a long list cannot swell the report.
const maxSystemOut = 16 << 10

// WriteJUnit writes the results as JUnit XML, one test suite per feature
// file. Unlike godog's junit formatter it reports skipped scenarios as
// skipped, and @should warnings as passing cases with the warning in
// system-out, so that CI shows the same verdict as the exit code. Case
// names carry no line number, so that a test's history survives edits
// above it. Disabled scenarios are not tests of the run: the top-level
// properties count them, by reason, so that the CI test tab holds the
// selected scenarios only, as many as the summary counts. A run that
// stopped (exit 2) carries one error case saying why, so that the
// pipeline's report step always finds a verdict.
func (r *Report) WriteJUnit(w io.Writer) error {
	stamp := ""
	if !r.Started.IsZero() {
		stamp = r.Started.UTC().Format("2006-01-02T15:04:05")
	}
	doc := junitSuites{Name: r.suiteName(), Time: secs(r.Duration), Timestamp: stamp, Properties: r.properties(true)}
	index := map[string]int{}
	suiteOf := func(name, key string) *junitSuite {
		i, ok := index[key]
		if !ok {
			i = len(doc.Suites)
			index[key] = i
			doc.Suites = append(doc.Suites, junitSuite{Name: name, Timestamp: stamp, Properties: r.properties(false)})
		}
		return &doc.Suites[i]
	}
	if r.Stopped != "" {
		suite := suiteOf("conform", "")
		why := r.Stopped
		if r.Unfinished > 0 {
			why += fmt.Sprintf(": %d scenario(s) left unfinished; the ones that finished are listed as usual", r.Unfinished)
		}
		suite.Cases = append(suite.Cases, junitCase{Name: "the run", Classname: "conform", Time: secs(r.Duration),
			Error: &junitProblem{Message: firstLine(r.Stopped), Type: "stopped", Text: why}})
		suite.Tests++
		suite.Errors++
	}
	seen := map[string]int{}
	for _, s := range r.Scenarios {
		if s.Status == Disabled {
			// Left out by the configuration, not a test of this run: the
			// top-level properties count them with their reasons.
			continue
		}
		suite := suiteOf(s.Feature+" ("+s.URI+")", s.URI)
		name := fmt.Sprintf("[%s] %s", s.Level, s.Name)
		// Two scenarios of one file may share a name; their order keeps
		// their names apart without a line number.
		if seen[s.URI+"\x00"+name]++; seen[s.URI+"\x00"+name] > 1 {
			name = fmt.Sprintf("%s #%d", name, seen[s.URI+"\x00"+name])
		}
		c := junitCase{Name: name, Classname: s.Area, File: s.URI, Line: s.Line, Time: secs(s.Duration)}
		detail := problemText(s)
		switch s.Status {
		case Failed:
			c.Failure = &junitProblem{Message: firstLine(s.Message), Type: s.Level, Text: detail}
			suite.Failures++
		case Errored:
			c.Error = &junitProblem{Message: firstLine(s.Message), Type: "error", Text: detail}
			suite.Errors++
		case Skipped:
			c.Skipped = &junitProblem{Message: s.SkipReason, Type: s.Status.String()}
			suite.Skipped++
		case Warned:
			c.SystemOut = "WARNING (@should; --strict makes this a failure)\n" + detail
		}
		if s.Status == Failed || s.Status == Errored || s.Status == Warned {
			c.SystemOut = strings.TrimPrefix(c.SystemOut+"\n", "\n") + transcript(s.Exchanges)
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, c)
	}
	for i := range doc.Suites {
		var d time.Duration
		doc.Tests += doc.Suites[i].Tests
		doc.Failures += doc.Suites[i].Failures
		doc.Errors += doc.Suites[i].Errors
		doc.Skipped += doc.Suites[i].Skipped
		for _, s := range r.Scenarios {
			if j, ok := index[s.URI]; ok && j == i && s.Status != Disabled {
				d += s.Duration
			}
		}
		doc.Suites[i].Time = secs(d)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("writing junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// transcript joins a scenario's exchanges, cut at maxSystemOut.
func transcript(exchanges []string) string {
	if len(exchanges) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("exchanges of the scenario:\n")
	for i, e := range exchanges {
		line := fmt.Sprintf("%2d. %s\n", i+1, e)
		if b.Len()+len(line) > maxSystemOut {
			fmt.Fprintf(&b, "… %d more exchange(s) left out\n", len(exchanges)-i)
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

func problemText(s ScenarioResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario: %s\n", s.Location())
	if s.FailedStep != "" {
		fmt.Fprintf(&b, "step:    %s\n", s.FailedAt())
	}
	if s.Request != "" {
		fmt.Fprintf(&b, "request: %s\n", s.Request)
	}
	if s.Message != "" {
		fmt.Fprintf(&b, "why:     %s\n", s.Message)
	}
	if s.Response != "" {
		fmt.Fprintf(&b, "got:     %s\n", s.Response)
	}
	return b.String()
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
