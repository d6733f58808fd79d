package runner

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// stoppedReport is the report of a run that could not start: it judges
// nothing and says why.
func stoppedReport(cfg kit.Config, start time.Time, err error) *kit.Report {
	rep := newReport(cfg, start, time.Since(start))
	rep.Stopped = wire.Redactor(cfg.APIKey)(err.Error())
	return rep
}

func newReport(cfg kit.Config, start time.Time, d time.Duration) *kit.Report {
	return &kit.Report{
		Version:  cfg.Version,
		BaseURL:  wire.Redactor(cfg.APIKey)(cfg.BaseURL),
		Key:      wire.RedactKey(cfg.APIKey),
		Settings: settings(cfg),
		Started:  start,
		Duration: d,
	}
}

// Refuse writes the reports of a run that could not start because of why
// (a usage error found before any request) to every report of cfg.Reports,
// each with one error case naming the cause, and returns that report with
// why.
func Refuse(cfg kit.Config, why error) (*kit.Report, error) {
	rep := stoppedReport(cfg, time.Now(), why)
	return rep, errors.Join(why, writeReports(cfg, rep))
}

// writeReports writes every report of rep: junit or cucumber to Output
// with --format junit or cucumber, each of cfg.Reports in its format, and
// the summary. Every report is attempted; the errors of all are returned,
// and rep.Files names only the files written whole.
func writeReports(cfg kit.Config, rep *kit.Report) error {
	rep.Files = nil
	var errs []error
	write := func(w io.Writer, format, name string) {
		if w == nil {
			errs = append(errs, fmt.Errorf("%w: a %s report without a writer", kit.ErrUsage, format))
			return
		}
		to, ok := reportWriters(rep)[format]
		if !ok {
			errs = append(errs, fmt.Errorf("%w: no report is written as %q (want %s, %s or %s)", kit.ErrUsage, format, kit.FormatJUnit, kit.FormatCucumber, kit.FormatHTML))
			return
		}
		if err := writeRedacted(w, cfg.APIKey, format, to); err != nil {
			errs = append(errs, err)
			return
		}
		if name != "" {
			rep.Files = append(rep.Files, name)
		}
	}
	for _, f := range cfg.Reports {
		write(f.W, f.Format, f.Name)
	}
	if cfg.Output != nil && (cfg.Format == kit.FormatJUnit || cfg.Format == kit.FormatCucumber) {
		write(cfg.Output, cfg.Format, cfg.OutputName)
	}
	// A run that stopped before its first scenario has nothing to sum up:
	// the error that stopped it is all there is, and the caller prints it.
	if cfg.Summary != nil && (rep.Stopped == "" || len(rep.Scenarios) > 0 || rep.Unfinished > 0) {
		errs = append(errs, writeRedacted(cfg.Summary, cfg.APIKey, "summary", func(w io.Writer) error {
			rep.WriteSummary(w)
			return nil
		}))
	}
	return errors.Join(errs...)
}

// reportWriters are the writers of rep, by format.
func reportWriters(rep *kit.Report) map[string]func(io.Writer) error {
	return map[string]func(io.Writer) error{kit.FormatJUnit: rep.WriteJUnit, kit.FormatCucumber: rep.WriteCucumber, kit.FormatHTML: rep.WriteHTML}
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
