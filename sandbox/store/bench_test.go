package store

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/testcampaign/kit/fixtures"
	"github.com/testcampaign/kit/sandbox"
)

var (
	benchCampaign = sandbox.CampaignInput{Name: "Load test campaign", Platform: "android", TestersRequired: 3, RewardPerBug: "0.5"}
	benchBug      = sandbox.BugInput{CampaignID: "cmp_000002", Title: "Crash on login", Description: "Tap login twice quickly.", Severity: "high"}
)

// accountSizes are the account sizes the write benchmarks run at: a small
// account and one after minutes of creates, so a cost that grows with the
// account shows as a difference between the two.
var accountSizes = []int{10_000, 300_000}

// filledDB is an account holding n campaigns and n bugs beyond the seed.
func filledDB(b *testing.B, n int) *DB {
	b.Helper()
	tmpl, _ := newTemplate(b, Limits{Records: 100_000_000, Webhooks: 16, Events: DefaultLimits.Events})
	db := tmpl.Open("acct-1", sandbox.NewFrozenClock(origin), Options{})
	for range n {
		if _, err := db.CreateCampaign(b.Context(), benchCampaign); err != nil {
			b.Fatal(err)
		}
		if _, err := db.FileBug(b.Context(), benchBug); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	return db
}

func BenchmarkCreateCampaign(b *testing.B) {
	for _, n := range accountSizes {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			db := filledDB(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := db.CreateCampaign(b.Context(), benchCampaign); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFileBug(b *testing.B) {
	for _, n := range accountSizes {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			db := filledDB(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := db.FileBug(b.Context(), benchBug); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRetainedPerRecord reports the heap that campaigns and bugs keep
// once written, events included, what a large account costs, next to what
// the meter charges for them: the charge must not fall short of the heap,
// or a shared -memory-budget is not a bound. One workload files every bug
// under the same campaign; the other gives every bug a campaign of its own,
// which costs a counts row and a postings list apiece.
func BenchmarkRetainedPerRecord(b *testing.B) {
	for _, own := range []bool{false, true} {
		b.Run(fmt.Sprintf("records=2x100k/campaign-per-bug=%v", own), func(b *testing.B) {
			for b.Loop() {
				kept, charged := retainedPerRecord(b, 100_000, own)
				b.ReportMetric(kept, "B/record")
				b.ReportMetric(charged, "charged-B/record")
			}
		})
	}
}

// retainedPerRecord writes n campaigns and n bugs into a fresh account and
// returns the heap they keep and what the meter charged, per record.
func retainedPerRecord(tb testing.TB, n int, campaignPerBug bool) (kept, charged float64) {
	meter := &summingMeter{}
	before := heapAlloc()
	db := openDB(tb, Options{Meter: meter})
	ctx := context.Background()
	for range n {
		c, err := db.CreateCampaign(ctx, benchCampaign)
		if err != nil {
			tb.Fatal(err)
		}
		in := benchBug
		if campaignPerBug {
			in.CampaignID = c.ID
		}
		if _, err := db.FileBug(ctx, in); err != nil {
			tb.Fatal(err)
		}
	}
	kept = float64(heapAlloc()-before) / float64(2*n)
	runtime.KeepAlive(db)
	return kept, float64(meter.charged) / float64(2*n)
}

// summingMeter accepts every charge and keeps the balance.
type summingMeter struct{ charged int64 }

func (m *summingMeter) Charge(n int64) error { m.charged += n; return nil }
func (m *summingMeter) Release(n int64)      { m.charged -= n }

// heapAlloc is the live heap after a collection: HeapInuse would count
// whole spans, most of them held by a few survivors among the loop's
// garbage.
func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkNewTemplate seeds a template with the embedded fixtures' testers
// and campaigns and 200,000 bugs, as `-fixtures` does with a large set.
func BenchmarkNewTemplate(b *testing.B) {
	seed, err := fixtures.Load(fixtures.Default())
	if err != nil {
		b.Fatal(err)
	}
	base := seed.Bugs
	seed.Bugs = make([]sandbox.SeedBug, 0, 200_000)
	for len(seed.Bugs) < cap(seed.Bugs) {
		seed.Bugs = append(seed.Bugs, base[:min(len(base), cap(seed.Bugs)-len(seed.Bugs))]...)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewTemplate(seed, DefaultLimits); err != nil {
			b.Fatal(err)
		}
	}
}
