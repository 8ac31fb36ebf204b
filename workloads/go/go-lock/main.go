// go-lock - goroutines that take turns on one sync.Mutex guarding a slow update.
//
// Problem: --workers goroutines (default 8, GOMAXPROCS as the machine has) loop:
// take the table's lock (table.update), update the table under it (about
// --hold-us of CPU, default 200), release it, then prepare the next update
// without the lock (about --think-us of CPU, default 50). The lock is held most
// of the time, so the workers mostly wait for each other: a goroutine that finds
// it taken spins briefly, then parks in the runtime ("sync.Mutex.Lock") until the
// holder's Unlock readies it.
//
// Expected diagnosis: knot {main.worker ×8 goroutines} at sync.(*Mutex).Lock ←
// main.(*table).update: the workers wait only for each other, at the lock's call
// site.
//
// --fixed: each worker updates its own shard under its own lock.
package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type options struct {
	seconds float64
	fixed   bool
	workers int
	holdUS  int
	thinkUS int
}

const summary = "Goroutines take turns on one sync.Mutex that guards a slow update " +
	"(--fixed: one lock per worker's shard)."

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: go-lock [--seconds S] [--fixed] [--workers N] [--hold-us US] [--think-us US]\n\n%s\n\n", summary)
	fmt.Fprintln(w, "  --seconds S     run time (default 5)")
	fmt.Fprintln(w, "  --fixed         one lock per worker")
	fmt.Fprintln(w, "  --workers N     worker goroutines (default 8)")
	fmt.Fprintln(w, "  --hold-us US    CPU time under the lock per update (default 200)")
	fmt.Fprintln(w, "  --think-us US   CPU time between updates (default 50)")
	fmt.Fprintln(w, "  --help          this text")
}

func usageError(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "go-lock: %s\n", fmt.Sprintf(format, a...))
	usage(os.Stderr)
	os.Exit(2)
}

// parse reads the flags the way the C workloads do: --name VALUE or --name=VALUE.
func parse(args []string) options {
	o := options{seconds: 5, workers: 8, holdUS: 200, thinkUS: 50}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "--") {
			usageError("unexpected argument '%s'", arg)
		}
		name, val, hasVal := strings.Cut(arg[2:], "=")
		switch name {
		case "help", "fixed":
			if hasVal {
				usageError("option '--%s' takes no value", name)
			}
			if name == "help" {
				usage(os.Stdout)
				os.Exit(0)
			}
			o.fixed = true
			continue
		case "seconds", "workers", "hold-us", "think-us":
		default:
			usageError("unknown option '%s'", arg)
		}
		if !hasVal {
			if i+1 >= len(args) {
				usageError("option '%s' needs a value", arg)
			}
			i++
			val = args[i]
		}
		if name == "seconds" {
			s, err := strconv.ParseFloat(val, 64)
			if err != nil || !(s > 0 && s <= 86400) {
				usageError("--seconds: expected a positive number, got '%s'", val)
			}
			o.seconds = s
			continue
		}
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 || n > 100000 {
			usageError("--%s: expected an integer in 1..100000, got '%s'", name, val)
		}
		switch name {
		case "workers":
			o.workers = n
		case "hold-us":
			o.holdUS = n
		case "think-us":
			o.thinkUS = n
		}
	}
	return o
}

// spin burns about d of CPU time (the work the lock guards, or the work between).
//
//go:noinline
func spin(d time.Duration, x *uint64) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i := 0; i < 100; i++ {
			*x = *x*6364136223846793005 + 1442695040888963407
		}
	}
}

type table struct {
	mu   sync.Mutex
	rows map[uint64]uint64
	hold time.Duration
}

//go:noinline
func (t *table) update(key uint64) {
	t.mu.Lock()
	var x uint64 = key
	spin(t.hold, &x)
	t.rows[key%1024] = x
	t.mu.Unlock()
}

func worker(tab *table, think time.Duration, deadline time.Time, done *atomic.Uint64, wg *sync.WaitGroup) {
	defer wg.Done()
	var x uint64
	for n := uint64(0); time.Now().Before(deadline); n++ {
		tab.update(n)
		spin(think, &x)
		done.Add(1)
	}
}

func main() {
	o := parse(os.Args[1:])
	hold := time.Duration(o.holdUS) * time.Microsecond
	think := time.Duration(o.thinkUS) * time.Microsecond
	shared := &table{rows: make(map[uint64]uint64), hold: hold}
	var done atomic.Uint64
	start := time.Now()
	deadline := start.Add(time.Duration(o.seconds * float64(time.Second)))
	var wg sync.WaitGroup
	for i := 0; i < o.workers; i++ {
		tab := shared
		if o.fixed {
			tab = &table{rows: make(map[uint64]uint64), hold: hold}
		}
		wg.Add(1)
		go worker(tab, think, deadline, &done, &wg)
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	mode := map[bool]string{false: "plain", true: "fixed"}[o.fixed]
	fmt.Fprintf(os.Stderr, "go-lock: %s mode, %d workers, %d updates\n", mode, o.workers, done.Load())
	fmt.Printf("throughput: %.1f ops/s\n", float64(done.Load())/secs)
}
