package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Bounds of the GC percent the pacer sets.
const (
	// minGCPercent is Go's default: a heap whose live data is past the
	// headroom is collected as Go would collect it, never later.
	minGCPercent = 100
	// maxGCPercent keeps a small heap from waiting for many times its size:
	// a burst of garbage on a nearly empty sandbox (a run of large bodies)
	// is collected before it is a burden to the machine.
	maxGCPercent = 400
)

// defaultGCHeadroom is what a small heap may grow by between collections.
// Nearly all of the sandbox's live heap is records that stay for hours, and a
// collection marks every one of them again: at Go's default, with 300,000
// campaigns in one account (60 MiB live), the collector spent 6.6 µs of CPU
// per GET by id and 23 µs per create, more than the handlers themselves.
const defaultGCHeadroom = 256 << 20

// pacedHeadroom is the headroom the pacer runs with, 0 when it does not
// run: an operator who set GOGC has chosen the collector's pace.
func pacedHeadroom(flag byteSize, gogc string) uint64 {
	if gogc != "" {
		return 0
	}
	return uint64(flag)
}

// gcPercentFor is the GC percent that lets a heap of live bytes grow by
// headroom before the next collection, never by less than its own size and
// never by more than four times it.
func gcPercentFor(live, headroom uint64) int {
	if live == 0 || headroom/live >= maxGCPercent/100 {
		return maxGCPercent
	}
	return max(minGCPercent, int(headroom*100/live))
}

// gcPacer sets the GC percent after every collection from the heap that
// collection left live (/gc/heap/live:bytes), so that the next one comes
// after headroom more bytes (at most four times the live heap) while the
// heap is small, and as Go's default would once the live heap is larger
// than headroom. A soft memory limit (-memory-limit, GOMEMLIMIT) still caps
// the heap as it would without it.
type gcPacer struct {
	headroom uint64
	// mu keeps stop from restoring the percent while afterGC sets one.
	mu      sync.Mutex
	stopped bool
	// adjusted, if set, hears each percent the pacer sets; tests wait on it.
	adjusted func(percent int)
	restore  int
	live     []metrics.Sample
}

// startGCPacer paces the collector until stop is called, which gives back the
// GC percent the process had.
func startGCPacer(headroom uint64, adjusted func(percent int)) (stop func()) {
	p := &gcPacer{headroom: headroom, adjusted: adjusted, live: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	p.restore = debug.SetGCPercent(gcPercentFor(0, headroom))
	p.arm()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.stopped = true
		debug.SetGCPercent(p.restore)
	}
}

// sentinel is what the pacer drops for the collector to find: large enough
// not to share a tiny-allocator block with anything that stays alive.
type sentinel [32]byte

// arm makes the next collection call afterGC: the sentinel is unreachable as
// soon as arm returns, so that collection frees it and runs its cleanup.
func (p *gcPacer) arm() {
	runtime.AddCleanup(new(sentinel), (*gcPacer).afterGC, p)
}

func (p *gcPacer) afterGC() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	metrics.Read(p.live)
	percent := gcPercentFor(p.live[0].Value.Uint64(), p.headroom)
	debug.SetGCPercent(percent)
	if p.adjusted != nil {
		p.adjusted(percent)
	}
	p.arm()
}
