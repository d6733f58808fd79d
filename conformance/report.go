package conformance

import (
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Status is the outcome of one scenario. Statuses are ranked, worst last, so
// that a run's result is the worst of its scenarios: skip < pass < warn <
// fail < error.
type Status int

// The ranked outcomes.
const (
	// Skipped: kept out by the profile, the key type or an opt-in.
	Skipped Status = iota
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
	Feature  string
	URI      string
	Line     int
	Name     string
	Tags     []string
	Area     string
	Level    string
	Maturity string
	Status   Status
	// SkipReason says why a Skipped scenario did not run.
	SkipReason string
	// FailedStep is the step that did not hold: what the spec wanted.
	FailedStep string
	// Message explains the failure, with a diff where values differ.
	Message string
	// Request and Response describe the last exchange before the failure,
	// with the key redacted.
	Request  string
	Response string
	// Rule names the rule of every response that failed the scenario when
	// its steps held; RuleLevel is that rule's level, which decides between
	// failure and warning.
	Rule      string
	RuleLevel string
	Duration  time.Duration
}

// Location is the scenario's file and line, as editors understand it.
func (r ScenarioResult) Location() string { return fmt.Sprintf("%s:%d", r.URI, r.Line) }

// Report is the outcome of one run.
type Report struct {
	// Version names the build of conform that wrote the report, if known.
	Version   string
	BaseURL   string
	Key       string // redacted
	Profile   string
	Strict    bool
	Duration  time.Duration
	Scenarios []ScenarioResult
}

// Result is the worst status of the run; a run with nothing to judge is
// Skipped.
func (r *Report) Result() Status {
	worst := Skipped
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

// ExitCode maps the result to the command's exit status: warnings and skips
// still conform.
func (r *Report) ExitCode() int {
	switch r.Result() {
	case Failed:
		return ExitDeviations
	case Errored:
		return ExitError
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

func (r *Report) count(st Status) int { return len(r.With(st)) }

// maxListed keeps the summary short enough to read at a glance; the full
// list is in the report file.
const maxListed = 15

// WriteSummary writes the human summary: the verdict, a table per area and
// level, then each failure with its request, what was wanted and what came
// back, then what was skipped and why.
func (r *Report) WriteSummary(w io.Writer) {
	strict := "off"
	if r.Strict {
		strict = "on"
	}
	fmt.Fprintf(w, "\n%s %s  profile=%s  key=%s  strict=%s\n", r.suiteName(), r.BaseURL, r.Profile, r.Key, strict)
	verdict := map[Status]string{
		Skipped: "NOTHING RUN", Passed: "CONFORMANT", Warned: "CONFORMANT (with warnings)",
		Failed: "NOT CONFORMANT", Errored: "ERROR (could not judge)",
	}[r.Result()]
	fmt.Fprintf(w, "RESULT: %s: %d passed, %d failed, %d warnings, %d errors, %d skipped in %s\n\n",
		verdict, r.count(Passed), r.count(Failed), r.count(Warned), r.count(Errored), r.count(Skipped), r.Duration.Round(time.Millisecond))

	fmt.Fprintf(w, "%-12s %-8s %6s %6s %6s %6s %6s\n", "AREA", "LEVEL", "PASS", "FAIL", "WARN", "ERROR", "SKIP")
	for _, row := range r.table() {
		fmt.Fprintf(w, "%-12s %-8s %6d %6d %6d %6d %6d\n", row.area, row.level, row.n[Passed], row.n[Failed], row.n[Warned], row.n[Errored], row.n[Skipped])
	}

	r.writeProblems(w, "FAILURES", r.With(Failed))
	r.writeProblems(w, "ERRORS (the kit could not judge these)", r.With(Errored))
	r.writeProblems(w, "WARNINGS (@should; --strict makes them failures)", r.With(Warned))

	reasons := map[string]int{}
	var order []string
	for _, s := range r.With(Skipped) {
		if reasons[s.SkipReason] == 0 {
			order = append(order, s.SkipReason)
		}
		reasons[s.SkipReason]++
	}
	if len(order) > 0 {
		fmt.Fprintf(w, "\nSKIPPED\n")
		for _, reason := range order {
			fmt.Fprintf(w, "  %3d  %s\n", reasons[reason], reason)
		}
	}
}

func (r *Report) writeProblems(w io.Writer, title string, list []ScenarioResult) {
	if len(list) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", title)
	for i, s := range list {
		if i == maxListed {
			fmt.Fprintf(w, "  … and %d more (see the report for all)\n", len(list)-maxListed)
			break
		}
		fmt.Fprintf(w, "%2d. [%s] %s: %s  (%s)\n", i+1, s.Level, s.Area, s.Name, s.Location())
		if s.Request != "" {
			fmt.Fprintf(w, "    request: %s\n", s.Request)
		}
		if s.FailedStep != "" {
			fmt.Fprintf(w, "    wanted:  %s\n", s.FailedStep)
		}
		fmt.Fprintf(w, "    why:     %s\n", indent(s.Message, "             "))
		if s.Response != "" {
			fmt.Fprintf(w, "    got:     %s\n", s.Response)
		}
	}
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
	for i, a := range areaOrder {
		rank[a] = i
	}
	levelRank := map[string]int{LevelMust: 0, LevelShould: 1, LevelSandbox: 2}
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
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
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

// WriteJUnit writes the results as JUnit XML, one test suite per feature
// file. Unlike godog's junit formatter it reports skipped scenarios as
// skipped, and @should warnings as passing cases with the warning in
// system-out, so that CI shows the same verdict as the exit code.
func (r *Report) WriteJUnit(w io.Writer) error {
	doc := junitSuites{Name: r.suiteName(), Time: secs(r.Duration)}
	index := map[string]int{}
	for _, s := range r.Scenarios {
		i, ok := index[s.URI]
		if !ok {
			i = len(doc.Suites)
			index[s.URI] = i
			doc.Suites = append(doc.Suites, junitSuite{Name: s.Feature + " (" + s.URI + ")"})
		}
		suite := &doc.Suites[i]
		c := junitCase{
			Name:      fmt.Sprintf("[%s] %s (line %d)", s.Level, s.Name, s.Line),
			Classname: s.Area,
			Time:      secs(s.Duration),
		}
		detail := problemText(s)
		switch s.Status {
		case Failed:
			c.Failure = &junitProblem{Message: firstLine(s.Message), Type: s.Level, Text: detail}
			suite.Failures++
		case Errored:
			c.Error = &junitProblem{Message: firstLine(s.Message), Type: "error", Text: detail}
			suite.Errors++
		case Skipped:
			c.Skipped = &junitProblem{Message: s.SkipReason}
			suite.Skipped++
		case Warned:
			c.SystemOut = "WARNING (@should; --strict makes this a failure)\n" + detail
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
			if index[s.URI] == i {
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

func problemText(s ScenarioResult) string {
	var b strings.Builder
	if s.Request != "" {
		fmt.Fprintf(&b, "request: %s\n", s.Request)
	}
	if s.FailedStep != "" {
		fmt.Fprintf(&b, "wanted:  %s\n", s.FailedStep)
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
