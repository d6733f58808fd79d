package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/testcampaign/kit/conformance/internal/report"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

// stoppedReport is the report of a run that could not start: it judges
// nothing and says why.
func stoppedReport(cfg Config, start time.Time, err error) *report.Report {
	rep := newReport(cfg, start, time.Since(start))
	rep.Stopped = wire.Redactor(cfg.APIKey)(err.Error())
	return rep
}

func newReport(cfg Config, start time.Time, d time.Duration) *report.Report {
	return &report.Report{
		Version:  cfg.Version,
		BaseURL:  wire.Redactor(cfg.APIKey)(cfg.BaseURL),
		Key:      wire.RedactKey(cfg.APIKey),
		Settings: cfg.settings(),
		Started:  start,
		Duration: d,
	}
}

// reportFiles are the report files of a run, created before anything is
// sent so that a path in a missing directory is refused at once, not after
// the whole run.
type reportFiles struct {
	junit, html, cucumber *os.File
	names                 []string
}

// openReportFiles opens every report file it can. On an error, the files
// that did open are still returned, so that the refusal can be written to
// them: CI finds a report on every exit 2.
func openReportFiles(cfg Config) (*reportFiles, error) {
	f := &reportFiles{}
	var errs []error
	open := func(path, what string) *os.File {
		if path == "" {
			return nil
		}
		file, err := os.Create(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: the %s report: %w", wire.ErrUsage, what, err))
			return nil
		}
		f.names = append(f.names, path)
		return file
	}
	f.junit = open(cfg.JUnitFile, "junit")
	f.html = open(cfg.HTMLFile, "HTML")
	f.cucumber = open(cfg.CucumberFile, "cucumber")
	if cfg.OutputName != "" && (cfg.Format == FormatJUnit || cfg.Format == FormatCucumber) {
		f.names = append(f.names, cfg.OutputName)
	}
	return f, errors.Join(errs...)
}

// Refuse writes the reports of a run that could not start because of why
// (a usage error found before any request) to every report file cfg asks
// for, each with one error case naming the cause, and returns that report
// with why.
func Refuse(cfg Config, why error) (*report.Report, error) {
	files, err := openReportFiles(cfg)
	return refused(cfg, files, errors.Join(why, err))
}

func refused(cfg Config, files *reportFiles, why error) (*report.Report, error) {
	rep := stoppedReport(cfg, time.Now(), why)
	return rep, errors.Join(why, files.finish(cfg, rep))
}

// finish writes every report of rep and closes the files: junit and
// cucumber (to their files, and to Output with --format junit or
// cucumber), HTML, and the summary. Every report is attempted; the errors
// of all are returned.
func (f *reportFiles) finish(cfg Config, rep *report.Report) error {
	rep.Files = f.names
	var errs []error
	write := func(w io.Writer, what string, to func(io.Writer) error) {
		if w != nil {
			errs = append(errs, writeRedacted(w, cfg.APIKey, what, to))
		}
	}
	switch cfg.Format {
	case FormatJUnit:
		write(cfg.Output, "junit", rep.WriteJUnit)
	case FormatCucumber:
		write(cfg.Output, "cucumber", rep.WriteCucumber)
	}
	if f.junit != nil {
		write(f.junit, "junit", rep.WriteJUnit)
	}
	if f.cucumber != nil {
		write(f.cucumber, "cucumber", rep.WriteCucumber)
	}
	if f.html != nil {
		write(f.html, "HTML", rep.WriteHTML)
	}
	// A run that stopped before its first scenario has nothing to sum up:
	// the error that stopped it is all there is, and the caller prints it.
	if cfg.Summary != nil && (rep.Stopped == "" || len(rep.Scenarios) > 0 || rep.Unfinished > 0) {
		write(cfg.Summary, "summary", func(w io.Writer) error {
			rep.WriteSummary(w)
			return nil
		})
	}
	return errors.Join(append(errs, f.close())...)
}

// close closes the files, saying which could not be: a report whose last
// write failed on close is not a report.
func (f *reportFiles) close() error {
	var errs []error
	for _, file := range []*os.File{f.junit, f.html, f.cucumber} {
		if file != nil {
			if err := file.Close(); err != nil {
				errs = append(errs, fmt.Errorf("closing the report %s: %w", file.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}

func writeRedacted(w io.Writer, key, what string, write func(io.Writer) error) error {
	rw := wire.NewRedactingWriter(w, key)
	if err := write(rw); err != nil {
		return fmt.Errorf("writing the %s report: %w", what, err)
	}
	if err := rw.Flush(); err != nil {
		return fmt.Errorf("writing the %s report: %w", what, err)
	}
	return nil
}
