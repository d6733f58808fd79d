package main

import (
	"io"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestGCPercentLetsASmallHeapGrowByTheHeadroom(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name           string
		live, headroom uint64
		want           int
	}{
		{"100 MiB live, 256 MiB headroom", 100 * mib, 256 * mib, 256},
		{"60 MiB live: at most four times the live heap", 60 * mib, 256 * mib, maxGCPercent},
		{"live as large as the headroom", 256 * mib, 256 * mib, 100},
		{"live larger than the headroom: Go's default", 700 * mib, 256 * mib, 100},
		{"a near-empty heap", 1 * mib, 256 * mib, maxGCPercent},
		{"nothing live yet", 0, 256 * mib, maxGCPercent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := gcPercentFor(tc.live, tc.headroom); got != tc.want {
				t.Errorf("gcPercentFor(%d, %d) = %d, want %d", tc.live, tc.headroom, got, tc.want)
			}
		})
	}
}

func TestGCPacerSetsThePercentAfterEachCollectionAndStopRestoresIt(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)

	percents := make(chan int, 1)
	// A headroom no test heap reaches sets the largest percent.
	stop := startGCPacer(1<<40, func(p int) {
		select {
		case percents <- p:
		default:
		}
	})
	for range 2 {
		runtime.GC()
		if got := <-percents; got != maxGCPercent {
			t.Errorf("after a collection the pacer set %d, want %d", got, maxGCPercent)
		}
	}
	stop()
	// A collection may have come between the last receive and stop.
	select {
	case <-percents:
	default:
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after stop the GC percent is %d, want the 100 it was", got)
	}
	runtime.GC()
	select {
	case p := <-percents:
		t.Errorf("a stopped pacer set %d", p)
	default:
	}
}

func TestThePacerRunsByDefaultAndGOGCOrAZeroHeadroomTurnsItOff(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := pacedHeadroom(cfg.gcHeadroom, ""); got != defaultGCHeadroom {
		t.Errorf("default flags pace with %d, want %d", got, defaultGCHeadroom)
	}
	if got := pacedHeadroom(cfg.gcHeadroom, "100"); got != 0 {
		t.Errorf("with GOGC=100 the pacer runs with %d", got)
	}
	cfg, err = parseFlags([]string{"-gc-headroom", "0"}, io.Discard)
	if err != nil || pacedHeadroom(cfg.gcHeadroom, "") != 0 {
		t.Errorf("-gc-headroom 0: the pacer runs with %d (%v)", pacedHeadroom(cfg.gcHeadroom, ""), err)
	}
	cfg, err = parseFlags([]string{"-gc-headroom", "64MiB"}, io.Discard)
	if err != nil || pacedHeadroom(cfg.gcHeadroom, "") != 64<<20 {
		t.Errorf("-gc-headroom 64MiB: %d, %v", cfg.gcHeadroom, err)
	}
}

// A small memory budget asks for a small process: unless -gc-headroom says
// otherwise, the garbage allowed between collections is at most half the
// budget, so that what evicted accounts leave is collected before it
// outgrows what the budget keeps.
func TestTheGCHeadroomFollowsASmallMemoryBudget(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want byteSize
	}{
		{nil, defaultGCHeadroom},
		{[]string{"-memory-budget", "64MiB"}, 32 << 20},
		{[]string{"-memory-budget", "64MiB", "-gc-headroom", "512MiB"}, 512 << 20},
		{[]string{"-memory-budget", "64MiB", "-gc-headroom", "0"}, 0},
	} {
		cfg, err := parseFlags(tc.args, io.Discard)
		if err != nil || cfg.gcHeadroom != tc.want {
			t.Errorf("%q: headroom %v (%v), want %v", tc.args, &cfg.gcHeadroom, err, &tc.want)
		}
	}
}
