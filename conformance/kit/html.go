package kit

import (
	"fmt"
	"html/template"
	"io"
	"regexp"
	"strings"
	"time"
)

// htmlPage is the HTML report: one page with its style inline, no script,
// no font, no image and no link to anything, so that it opens the same from
// a CI artifact, an e-mail or a laptop offline.
var htmlPage = template.Must(template.New("report").Funcs(template.FuncMap{"ruleText": ruleText}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{{.Verdict}}: conformance of {{.R.BaseURL}}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 70em; color: #1d1d1f; padding: 0 1em; overflow-wrap: anywhere; }
h1 { font-size: 1.6em; padding: .5em .7em; border-radius: 6px; color: #fff; margin: 0 0 .3em; }
h1.pass { background: #1a7f37; } h1.warn { background: #9a6700; } h1.fail { background: #cf222e; } h1.error, h1.none { background: #57606a; }
h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #d0d7de; }
.meta { color: #57606a; } .meta code { color: #1d1d1f; }
table { border-collapse: collapse; margin-top: .5em; }
table.rules { width: 100%; table-layout: fixed; }
table.rules th:nth-child(1) { width: 6.5em; } table.rules th:nth-child(2) { width: 4.5em; } table.rules th:nth-child(3) { width: 30%; } table.rules th:nth-child(4) { width: 6em; }
code { overflow-wrap: anywhere; }
th, td { border: 1px solid #d0d7de; padding: .25em .7em; text-align: right; }
th:first-child, td:first-child, th:nth-child(2), td:nth-child(2) { text-align: left; }
td.bad { background: #ffebe9; font-weight: 600; } td.warn { background: #fff8c5; }
.case { border: 1px solid #d0d7de; border-left: 4px solid #cf222e; border-radius: 4px; padding: .4em .8em; margin: .8em 0; }
.case.warning { border-left-color: #9a6700; } .case.error { border-left-color: #57606a; }
.case h3 { font-size: 1em; margin: .2em 0; }
dl { display: grid; grid-template-columns: 7em minmax(0, 1fr); gap: .2em .8em; margin: .4em 0; }
dt { color: #57606a; } dd { margin: 0; min-width: 0; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f8fa; padding: .4em .6em; margin: 0; border-radius: 4px; font-size: 12.5px; }
.count { font-weight: 400; color: #57606a; }
details.also { margin: .3em 0 .2em; } details.also summary { cursor: pointer; color: #57606a; }
details.also ul { margin: .3em 0; padding-left: 1.4em; } details.also li { margin: .15em 0; }
.rule { font-weight: 600; }
table.rules td { text-align: left; vertical-align: top; } table.rules td:nth-child(4) { text-align: right; }
table.rules tr.exercised td:nth-child(3) { background: #fff8c5; }
ul.skips li { margin: .2em 0; }
details.feature { margin: .3em 0; } details.feature summary { cursor: pointer; }
table.scenarios { width: 100%; table-layout: fixed; margin: .3em 0 .6em; }
table.scenarios th:nth-child(1) { width: 4.5em; } table.scenarios th:nth-child(3) { width: 5em; } table.scenarios th:nth-child(4) { width: 6em; } table.scenarios th:nth-child(5) { width: 25%; }
table.scenarios td, table.scenarios th { text-align: left; vertical-align: top; }
table.scenarios td.failed, table.scenarios td.error { background: #ffebe9; font-weight: 600; } table.scenarios td.warning { background: #fff8c5; }
</style>
</head>
<body>
<h1 class="{{.Class}}" id="verdict">{{.Verdict}}</h1>
<p class="meta" id="counts">{{.Counts}} in {{.Duration}}</p>
<p class="meta">{{.R.BaseURL}} · key <code>{{.R.Key}}</code> · {{.Name}}{{if .Started}} · started {{.Started}}{{end}}<br>
{{range .Settings}}<code>{{index . 0}}={{index . 1}}</code> {{end}}</p>
{{if .R.Stopped}}<p class="case error" id="stopped"><strong>The run stopped:</strong> {{.R.Stopped}}{{if .R.Unfinished}} ({{.R.Unfinished}} scenario(s) left unfinished){{end}}</p>{{end}}

<h2>Areas by level</h2>
<table id="areas">
<tr><th>Area</th><th>Level</th><th>Pass</th><th>Fail</th><th>Warn</th><th>Error</th><th>Skip</th><th>Disabled</th></tr>
{{range .Rows}}<tr><td>{{.Area}}</td><td>{{.Level}}</td><td>{{.Pass}}</td><td{{if .Fail}} class="bad"{{end}}>{{.Fail}}</td><td{{if .Warn}} class="warn"{{end}}>{{.Warn}}</td><td{{if .Error}} class="bad"{{end}}>{{.Error}}</td><td>{{.Skip}}</td><td>{{.Disabled}}</td></tr>
{{end}}</table>

{{range .Sections}}{{if .Groups}}
<h2 id="{{.ID}}">{{.Title}} ({{.Scenarios}} in {{len .Groups}} cause(s))</h2>
{{range .Groups}}{{$first := index .Cases 0}}<div class="case {{.Status}}">
{{if .Also}}<h3>{{.Cause}} <span class="count">in {{len .Cases}} scenarios; the first:</span></h3>
{{end}}<h3>[{{$first.Level}}] {{$first.Area}}: {{$first.Name}}</h3>
<dl>
<dt>Scenario</dt><dd><code>{{$first.Location}}</code></dd>
{{if $first.FailedStep}}<dt>Step</dt><dd>{{$first.FailedAt}}</dd>{{end}}
{{if $first.Rule}}<dt>Rule</dt><dd class="rule">{{$first.Rule}}</dd>{{end}}
<dt>Why</dt><dd><pre>{{$first.Message}}</pre></dd>
{{if $first.Request}}<dt>Request</dt><dd><pre>{{$first.Request}}</pre></dd>{{end}}
{{if $first.Response}}<dt>Response</dt><dd><pre>{{$first.Response}}</pre></dd>{{end}}
</dl>
{{if .Also}}<details class="also"><summary>the {{len .Also}} other scenario(s) with this cause</summary>
<ul>{{range .Also}}<li><code>{{.Location}}</code> [{{.Level}}] {{.Area}}: {{.Name}}{{if .FailedStep}}, at <em>{{.FailedStep}}</em>{{end}}</li>
{{end}}</ul></details>{{end}}
</div>
{{end}}{{end}}{{end}}

{{if .R.Unchecked}}
<h2 id="unchecked">Not checked (the run could not judge these as it normally does)</h2>
<ul class="skips">{{range .R.Unchecked}}<li>{{.}}</li>{{end}}</ul>
{{end}}
{{range .Reasons}}{{if .List}}
<h2 id="{{.ID}}">{{.Title}}</h2>
<ul class="skips">{{range .List}}<li><strong>{{.N}}</strong> × {{.Reason}}</li>{{end}}</ul>
{{end}}{{end}}

{{if .Features}}
<h2 id="scenarios">Scenarios by feature ({{.Ran}} in {{len .Features}} feature(s))</h2>
{{range .Features}}<details class="feature"><summary><strong>{{.Name}}</strong> <code>{{.URI}}</code> <span class="count">{{.Counts}}</span></summary>
<table class="scenarios">
<tr><th>Line</th><th>Scenario</th><th>Level</th><th>Result</th><th>Rules cited</th></tr>
{{range .Scenarios}}<tr><td>{{if .Line}}{{.Line}}{{end}}</td><td>{{.Name}}</td><td>{{.Level}}</td><td class="{{.Status}}">{{.Status}}</td><td>{{range $i, $id := .Rules}}{{if $i}} {{end}}{{$id}}{{end}}</td></tr>
{{end}}</table>
</details>
{{end}}{{end}}

{{if .R.Coverage}}
<h2 id="rules">Rules of docs/contract.md: {{.Coverage}}</h2>
<table id="coverage" class="rules">
<tr><th>Rule</th><th>Level</th><th>How the run ended</th><th>Exchanges</th><th>Rule text</th></tr>
{{range .R.Coverage}}<tr class="{{.State}}"><td>{{.Rule.ID}}</td><td>{{.Rule.Level}}</td><td{{if .Broken}} class="bad"{{end}}>{{.State}}{{if .Reason}}: {{.Reason}}{{end}}{{if .Broken}} ({{.Broken}} broke it){{end}}{{with .Proofs}}<br><small>proven by: {{range $i, $p := .}}{{if $i}}; {{end}}{{$p}}{{end}}</small>{{end}}</td><td>{{.Exchanges}}</td><td>{{ruleText .Rule.Text}}</td></tr>
{{end}}</table>
{{end}}
</body>
</html>
`))

type htmlRow struct {
	Area, Level                             string
	Pass, Fail, Warn, Error, Skip, Disabled int
}

type htmlSection struct {
	ID, Title string
	Scenarios int
	Groups    []htmlGroup
}

// htmlGroup is the scenarios of a section that share a cause (causeOf),
// as the summary groups them: one card shows the first of them whole, and
// lists the others, so that a deployment that went away makes one card,
// not one per scenario it left without an answer.
type htmlGroup struct {
	Cause  string
	Status string
	Cases  []ScenarioResult
	Also   []ScenarioResult
}

// htmlFeature is one feature file's scenarios as the run judged them, for
// a reader to see what ran, passing or not, and which rules each cites.
type htmlFeature struct {
	Name, URI, Counts string
	Scenarios         []htmlScenario
}

type htmlScenario struct {
	Line        int
	Name, Level string
	Status      Status
	Rules       []string
}

// byFeature lists the scenarios the run selected (the disabled ones are
// counted with their reasons instead) under their feature files, files and
// scenarios in the order they ran in.
func (r *Report) byFeature() []htmlFeature {
	var out []htmlFeature
	index := map[string]int{}
	var counts [][Errored + 1]int
	for _, s := range r.Scenarios {
		if s.Status == Disabled {
			continue
		}
		i, ok := index[s.URI]
		if !ok {
			i = len(out)
			index[s.URI] = i
			out = append(out, htmlFeature{Name: s.Feature, URI: s.URI})
			counts = append(counts, [Errored + 1]int{})
		}
		out[i].Scenarios = append(out[i].Scenarios, htmlScenario{Line: s.Line, Name: s.Name, Level: s.Level, Status: s.Status, Rules: Citations(s.Tags)})
		counts[i][s.Status]++
	}
	// In the order of the run's own tally (Counts).
	order := []struct {
		st       Status
		one, few string
	}{{Passed, "passed", "passed"}, {Failed, "failed", "failed"}, {Warned, "warning", "warnings"}, {Errored, "error", "errors"}, {Skipped, "skipped", "skipped"}}
	for i := range out {
		var parts []string
		for _, o := range order {
			switch n := counts[i][o.st]; n {
			case 0:
			case 1:
				parts = append(parts, "1 "+o.one)
			default:
				parts = append(parts, fmt.Sprintf("%d %s", n, o.few))
			}
		}
		out[i].Counts = fmt.Sprintf("%d scenario(s): %s", len(out[i].Scenarios), strings.Join(parts, ", "))
	}
	return out
}

type htmlReason struct {
	N      int
	Reason string
}

type htmlReasons struct {
	ID, Title string
	List      []htmlReason
}

// WriteHTML writes the report as one self-contained HTML page: the verdict,
// the areas by level, each failure with its step, the rule it broke and the
// exchange at fault (the key redacted as everywhere), and what was skipped
// or disabled and why.
func (r *Report) WriteHTML(w io.Writer) error {
	class := map[Status]string{Disabled: "none", Skipped: "none", Passed: "pass", Warned: "warn", Failed: "fail", Errored: "error"}[r.Result()]
	if r.ExitCode() == ExitDeviations {
		class = "fail"
	}
	if r.Stopped != "" {
		class = "error"
	}
	data := struct {
		R                                      *Report
		Verdict, Class, Counts, Duration, Name string
		Coverage                               string
		Started                                string
		Settings                               [][2]string
		Rows                                   []htmlRow
		Sections                               []htmlSection
		Reasons                                []htmlReasons
		Features                               []htmlFeature
		Ran                                    int
	}{
		R: r, Verdict: r.verdict(), Class: class, Counts: r.Counts(), Duration: r.Duration.Round(time.Millisecond).String(),
		Name: r.suiteName(), Settings: r.Settings.pairs(), Coverage: r.coverageCounts(),
		Features: r.byFeature(), Ran: r.Selected(),
	}
	if !r.Started.IsZero() {
		data.Started = r.Started.UTC().Format(time.RFC3339)
	}
	for _, row := range r.table() {
		data.Rows = append(data.Rows, htmlRow{row.area, row.level, row.n[Passed], row.n[Failed], row.n[Warned], row.n[Errored], row.n[Skipped], row.n[Disabled]})
	}
	for _, sec := range []struct {
		id, title string
		st        Status
	}{{"failures", "Failures", Failed}, {"errors", "Errors (the kit could not judge these)", Errored}, {"warnings", "Warnings (@should; --strict makes them failures)", Warned}} {
		list := r.With(sec.st)
		s := htmlSection{ID: sec.id, Title: sec.title, Scenarios: len(list)}
		for _, g := range groupFailures(list) {
			s.Groups = append(s.Groups, htmlGroup{Cause: g.cause, Status: sec.st.String(), Cases: g.list, Also: g.list[1:]})
		}
		data.Sections = append(data.Sections, s)
	}
	for _, sec := range []struct {
		id, title string
		st        Status
	}{{"skipped", "Skipped (could not run here)", Skipped}, {"disabled", "Disabled (left out by this run's configuration)", Disabled}} {
		rs := htmlReasons{ID: sec.id, Title: sec.title}
		index := map[string]int{}
		for _, c := range r.With(sec.st) {
			i, ok := index[c.SkipReason]
			if !ok {
				i = len(rs.List)
				index[c.SkipReason] = i
				rs.List = append(rs.List, htmlReason{Reason: c.SkipReason})
			}
			rs.List[i].N++
		}
		data.Reasons = append(data.Reasons, rs)
	}
	if err := htmlPage.Execute(w, data); err != nil {
		return fmt.Errorf("writing the HTML report: %w", err)
	}
	return nil
}

var (
	// codeSpanRe is a Markdown code span of a rule's text.
	codeSpanRe = regexp.MustCompile("`([^`]+)`")
	// linkRe is a Markdown link: its text is what a reader reads.
	linkRe = regexp.MustCompile(`\[([^\]]+)\]\([^)]+\)`)
)

// ruleText renders a rule of docs/contract.md, written in Markdown, as a
// page shows text: a code span as code, without its backticks, a link as
// its text, emphasis as the words; everything else escaped.
func ruleText(markdown string) template.HTML {
	text := linkRe.ReplaceAllString(markdown, "$1")
	text = strings.ReplaceAll(text, "**", "")
	var b strings.Builder
	last := 0
	for _, m := range codeSpanRe.FindAllStringSubmatchIndex(text, -1) {
		b.WriteString(template.HTMLEscapeString(text[last:m[0]]))
		b.WriteString("<code>" + template.HTMLEscapeString(text[m[2]:m[3]]) + "</code>")
		last = m[1]
	}
	b.WriteString(template.HTMLEscapeString(text[last:]))
	return template.HTML(b.String())
}
