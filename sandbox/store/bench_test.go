package store

import (
	"runtime"
	"testing"

	"github.com/testcampaign/kit/sandbox"
)

func BenchmarkCreateCampaign(b *testing.B) {
	db := openDB(b, nil)
	in := sandbox.CampaignInput{Name: "Load test campaign", Platform: "android", TestersRequired: 3, RewardPerBug: "0.5"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.CreateCampaign(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFileBug(b *testing.B) {
	db := openDB(b, nil)
	in := sandbox.BugInput{CampaignID: "cmp_000002", Title: "Crash on login", Description: "Tap login twice quickly.", Severity: "high"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.FileBug(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRetainedPerRecord reports the heap that campaigns and bugs keep
// once written, events included: what a large account costs.
func BenchmarkRetainedPerRecord(b *testing.B) {
	for _, n := range []int{100_000} {
		b.Run("records=2x100k", func(b *testing.B) {
			for b.Loop() {
				before := heapInUse()
				db := openDB(b, nil)
				for range n {
					c, err := db.CreateCampaign(sandbox.CampaignInput{Name: "Load test campaign", Platform: "android", TestersRequired: 3, RewardPerBug: "0.5"})
					if err != nil {
						b.Fatal(err)
					}
					if _, err := db.FileBug(sandbox.BugInput{CampaignID: c.ID, Title: "Crash on login", Description: "Tap login twice quickly.", Severity: "high"}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(heapInUse()-before)/float64(2*n), "B/record")
				runtime.KeepAlive(db)
			}
		})
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
