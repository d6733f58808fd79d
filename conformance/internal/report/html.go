package report

import (
	"fmt"
	"html/template"
	"io"
	"time"
)

// htmlPage is the HTML report: one page with its style inline, no script,
// no font, no image and no link to anything, so that it opens the same from
// a CI artifact, an e-mail or a laptop offline.
var htmlPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{{.Verdict}}: conformance of {{.R.BaseURL}}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 70em; color: #1d1d1f; padding: 0 1em; }
h1 { font-size: 1.6em; padding: .5em .7em; border-radius: 6px; color: #fff; margin: 0 0 .3em; }
h1.pass { background: #1a7f37; } h1.warn { background: #9a6700; } h1.fail { background: #cf222e; } h1.error, h1.none { background: #57606a; }
h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #d0d7de; }
.meta { color: #57606a; } .meta code { color: #1d1d1f; }
table { border-collapse: collapse; margin-top: .5em; }
th, td { border: 1px solid #d0d7de; padding: .25em .7em; text-align: right; }
th:first-child, td:first-child, th:nth-child(2), td:nth-child(2) { text-align: left; }
td.bad { background: #ffebe9; font-weight: 600; } td.warn { background: #fff8c5; }
.case { border: 1px solid #d0d7de; border-left: 4px solid #cf222e; border-radius: 4px; padding: .4em .8em; margin: .8em 0; }
.case.warning { border-left-color: #9a6700; } .case.error { border-left-color: #57606a; }
.case h3 { font-size: 1em; margin: .2em 0; }
dl { display: grid; grid-template-columns: 7em 1fr; gap: .2em .8em; margin: .4em 0; }
dt { color: #57606a; } dd { margin: 0; }
pre { white-space: pre-wrap; word-break: break-word; background: #f6f8fa; padding: .4em .6em; margin: 0; border-radius: 4px; font-size: 12.5px; }
.rule { font-weight: 600; }
table.rules td { text-align: left; vertical-align: top; } table.rules td:nth-child(4) { text-align: right; }
table.rules tr.exercised td:nth-child(3) { background: #fff8c5; }
ul.skips li { margin: .2em 0; }
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

{{range .Sections}}{{if .Cases}}
<h2 id="{{.ID}}">{{.Title}} ({{len .Cases}})</h2>
{{range .Cases}}<div class="case {{.Status}}">
<h3>[{{.Level}}] {{.Area}}: {{.Name}}</h3>
<dl>
<dt>Scenario</dt><dd><code>{{.Location}}</code></dd>
{{if .FailedStep}}<dt>Step</dt><dd>{{.FailedAt}}</dd>{{end}}
{{if .Rule}}<dt>Rule</dt><dd class="rule">{{.Rule}}</dd>{{end}}
<dt>Why</dt><dd><pre>{{.Message}}</pre></dd>
{{if .Request}}<dt>Request</dt><dd><pre>{{.Request}}</pre></dd>{{end}}
{{if .Response}}<dt>Response</dt><dd><pre>{{.Response}}</pre></dd>{{end}}
</dl>
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

{{if .R.Coverage}}
<h2 id="rules">Rules of docs/contract.md: {{.Coverage}}</h2>
<table id="coverage" class="rules">
<tr><th>Rule</th><th>Level</th><th>How the run ended</th><th>Exchanges</th><th>Rule text</th></tr>
{{range .R.Coverage}}<tr class="{{.State}}"><td>{{.Rule.ID}}</td><td>{{.Rule.Level}}</td><td{{if .Broken}} class="bad"{{end}}>{{.State}}{{if .Reason}}: {{.Reason}}{{end}}{{if .Broken}} ({{.Broken}} broke it){{end}}{{with .Proofs}}<br><small>proven by: {{range $i, $p := .}}{{if $i}}; {{end}}{{$p}}{{end}}</small>{{end}}</td><td>{{.Exchanges}}</td><td>{{.Rule.Text}}</td></tr>
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
	Cases     []htmlCase
}

type htmlCase struct {
	ScenarioResult
	Status string
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
	}{
		R: r, Verdict: r.verdict(), Class: class, Counts: r.Counts(), Duration: r.Duration.Round(time.Millisecond).String(),
		Name: r.suiteName(), Settings: r.Settings.pairs(), Coverage: r.coverageCounts(),
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
		s := htmlSection{ID: sec.id, Title: sec.title}
		for _, c := range r.With(sec.st) {
			s.Cases = append(s.Cases, htmlCase{c, c.Status.String()})
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
