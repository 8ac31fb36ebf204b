// go-commit - a Go server whose one committer goroutine fdatasyncs one request
// at a time, between request goroutines and client goroutines over loopback TCP.
//
// Problem: the server listens on 127.0.0.1 (ephemeral port) and runs one
// goroutine per connection ("handle"): it reads a 64-byte request, hands it to
// the committer goroutine over a channel and waits on the request's own reply
// channel, then writes the 8-byte reply. The single committer goroutine
// ("commit") takes one request at a time, appends a 4 KiB record to a log
// (WriteAt, appendRecord) and fdatasyncs it (syncLog), then answers it. The
// client is a second process (this binary re-executed with --client-of):
// --clients goroutines (default 16) over --conns connections (default 4), a
// connection shared by its goroutines under a mutex, request -> reply, as a
// Go client library multiplexes calls over a few connections.
//
// Expected diagnosis: knot {committer goroutine, disk} at fdatasync (syncLog):
// the client goroutines wait for the handlers (socket), the handlers for the
// committer (channel). Go runs all of this on a few threads whatever
// goroutine they carry, so at thread level the waits of the handlers, the
// committer and the runtime's own work mix.
//
// --fixed: group commit: the committer takes every pending request, appends
// them all and syncs once for the batch.
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	reqSize  = 64
	recSize  = 4096
	logSlots = 4096 // a 16 MiB ring: the file stays small however long the run
)

type options struct {
	seconds  float64
	fixed    bool
	clients  int
	conns    int
	dir      string
	goTrace  string // Go's own execution tracer to this file (the client's to FILE.client)
	clientOf string // hidden: run as the client of this address
}

const summary = "A Go server: connection goroutines hand each request to one committer " +
	"goroutine that appends and fdatasyncs it, then reply (--fixed: one sync per " +
	"batch of pending requests)."

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: go-commit [--seconds S] [--fixed] [--clients N] [--conns N] [--dir DIR]\n\n%s\n\n", summary)
	fmt.Fprintln(w, "  --seconds S   run time (default 5)")
	fmt.Fprintln(w, "  --fixed       group commit: one fdatasync per batch")
	fmt.Fprintln(w, "  --clients N   client goroutines (default 16)")
	fmt.Fprintln(w, "  --conns N     client connections they share (default 4)")
	fmt.Fprintln(w, "  --dir DIR     directory for the log file (default . or /tmp, not tmpfs)")
	fmt.Fprintln(w, "  --go-trace F  run Go's execution tracer into F (the client's into F.client),")
	fmt.Fprintln(w, "                to compare its cost with other tracers")
	fmt.Fprintln(w, "  --help        this text")
}

func usageError(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "go-commit: %s\n", fmt.Sprintf(format, a...))
	usage(os.Stderr)
	os.Exit(2)
}

// parse reads the flags the way the C workloads do: --name VALUE or --name=VALUE.
func parse(args []string) options {
	o := options{seconds: 5, clients: 16, conns: 4}
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
		case "seconds", "clients", "conns", "dir", "client-of", "go-trace":
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
		switch name {
		case "seconds":
			s, err := strconv.ParseFloat(val, 64)
			if err != nil || !(s > 0 && s <= 86400) {
				usageError("--seconds: expected a positive number, got '%s'", val)
			}
			o.seconds = s
		case "clients", "conns":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > 1024 {
				usageError("--%s: expected an integer in 1..1024, got '%s'", name, val)
			}
			if name == "clients" {
				o.clients = n
			} else {
				o.conns = n
			}
		case "dir":
			o.dir = val
		case "client-of":
			o.clientOf = val
		case "go-trace":
			o.goTrace = val
		}
	}
	return o
}

func die(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "go-commit: %s\n", fmt.Sprintf(format, a...))
	os.Exit(1)
}

// logDir picks where the log goes: a sync on tmpfs costs nothing, which would
// hide the very wait this workload is about.
func logDir(dir string) string {
	if dir != "" {
		return dir
	}
	for _, d := range []string{".", "/var/tmp", "/tmp"} {
		var st syscall.Statfs_t
		if syscall.Statfs(d, &st) == nil && st.Type != 0x01021994 {
			return d
		}
	}
	return "."
}

type request struct {
	data  [reqSize]byte
	reply chan<- uint64 // the connection's writer goroutine
}

type server struct {
	log   *os.File
	next  int64
	reqs  chan *request
	syncs atomic.Uint64
}

//go:noinline
func (s *server) appendRecord(r *request) {
	var rec [recSize]byte
	copy(rec[:], r.data[:])
	off := (s.next % logSlots) * recSize
	s.next++
	if _, err := s.log.WriteAt(rec[:], off); err != nil {
		die("write: %v", err)
	}
}

//go:noinline
func (s *server) syncLog() {
	if err := syscall.Fdatasync(int(s.log.Fd())); err != nil {
		die("fdatasync: %v", err)
	}
	s.syncs.Add(1)
}

// commit is the committer goroutine: one sync per request, or per batch with --fixed.
func (s *server) commit(fixed bool) {
	batch := make([]*request, 0, 256)
	for r := range s.reqs {
		batch = append(batch[:0], r)
		if fixed {
		drain:
			for len(batch) < cap(batch) {
				select {
				case more, ok := <-s.reqs:
					if !ok {
						break drain
					}
					batch = append(batch, more)
				default:
					break drain
				}
			}
		}
		for _, b := range batch {
			s.appendRecord(b)
			if !fixed {
				s.syncLog()
			}
		}
		if fixed {
			s.syncLog()
		}
		for _, b := range batch {
			b.reply <- binary.LittleEndian.Uint64(b.data[:8])
		}
	}
}

// handle serves one connection as gRPC does over HTTP/2: its reader goroutine
// takes requests as they come (many in flight), its writer goroutine sends the
// replies in the order the committer finishes them. Nothing is closed when the
// client goes: the process ends with the run, and the reply channel holds more
// than the client can have in flight, so the committer never blocks on it.
func (s *server) handle(c net.Conn) {
	replies := make(chan uint64, 1024)
	go func() {
		w := bufio.NewWriter(c)
		var out [8]byte
		for id := range replies {
			binary.LittleEndian.PutUint64(out[:], id)
			w.Write(out[:])
			if len(replies) == 0 {
				if err := w.Flush(); err != nil {
					return
				}
			}
		}
	}()
	rd := bufio.NewReader(c)
	for {
		r := &request{reply: replies}
		if _, err := io.ReadFull(rd, r.data[:]); err != nil {
			return
		}
		s.reqs <- r
	}
}

func runServer(o options) {
	dir := logDir(o.dir)
	path := fmt.Sprintf("%s/go-commit.%d.log", dir, os.Getpid())
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		die("log %s: %v", path, err)
	}
	defer os.Remove(path)
	s := &server{log: f, reqs: make(chan *request, 1024)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		die("listen: %v", err)
	}
	go s.commit(o.fixed)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.handle(c)
		}
	}()

	self, err := os.Executable()
	if err != nil {
		die("own path: %v", err)
	}
	args := []string{"--client-of", ln.Addr().String(),
		"--seconds", strconv.FormatFloat(o.seconds, 'f', -1, 64),
		"--clients", strconv.Itoa(o.clients), "--conns", strconv.Itoa(o.conns)}
	if o.goTrace != "" {
		args = append(args, "--go-trace", o.goTrace+".client")
	}
	client := exec.Command(self, args...)
	client.Stderr = os.Stderr
	out, err := client.Output()
	if err != nil {
		die("client: %v", err)
	}
	ln.Close()
	var total uint64
	var secs float64
	if _, err := fmt.Sscanf(string(out), "%d %g", &total, &secs); err != nil {
		die("client said %q", out)
	}
	fmt.Fprintf(os.Stderr, "go-commit: %s mode, %d clients over %d connections, %d requests, %d syncs\n",
		map[bool]string{false: "plain", true: "fixed"}[o.fixed], o.clients, o.conns, total, s.syncs.Load())
	fmt.Printf("throughput: %.1f ops/s\n", float64(total)/secs)
}

// conn is one client connection shared by several goroutines, each with one call
// in flight, as a gRPC channel multiplexes calls: a caller writes its request
// under the write lock and waits for its reply, which the connection's reader
// goroutine hands over by request id.
type conn struct {
	wmu     sync.Mutex
	c       net.Conn
	pmu     sync.Mutex
	pending map[uint64]chan struct{}
}

func (c *conn) reader() {
	rd := bufio.NewReader(c.c)
	var rep [8]byte
	for {
		if _, err := io.ReadFull(rd, rep[:]); err != nil {
			return
		}
		id := binary.LittleEndian.Uint64(rep[:])
		c.pmu.Lock()
		done := c.pending[id]
		delete(c.pending, id)
		c.pmu.Unlock()
		if done == nil {
			die("client: reply to unknown request %d", id)
		}
		done <- struct{}{}
	}
}

//go:noinline
func (c *conn) call(id uint64, done chan struct{}) {
	var req [reqSize]byte
	binary.LittleEndian.PutUint64(req[:], id)
	c.pmu.Lock()
	c.pending[id] = done
	c.pmu.Unlock()
	c.wmu.Lock()
	_, err := c.c.Write(req[:])
	c.wmu.Unlock()
	if err != nil {
		die("client write: %v", err)
	}
	<-done
}

func runClient(o options) {
	conns := make([]*conn, o.conns)
	for i := range conns {
		c, err := net.Dial("tcp", o.clientOf)
		if err != nil {
			die("dial %s: %v", o.clientOf, err)
		}
		conns[i] = &conn{c: c, pending: make(map[uint64]chan struct{})}
		go conns[i].reader()
	}
	var total atomic.Uint64
	start := time.Now()
	deadline := start.Add(time.Duration(o.seconds * float64(time.Second)))
	var wg sync.WaitGroup
	for g := 0; g < o.clients; g++ {
		wg.Add(1)
		go func(c *conn) {
			defer wg.Done()
			done := make(chan struct{}, 1)
			for time.Now().Before(deadline) {
				c.call(total.Add(1), done)
			}
		}(conns[g%len(conns)])
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	for _, c := range conns {
		c.c.Close()
	}
	fmt.Printf("%d %g\n", total.Load(), secs)
}

// startTrace runs Go's execution tracer into path until the returned stop.
func startTrace(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		die("trace %s: %v", path, err)
	}
	if err := trace.Start(f); err != nil {
		die("trace: %v", err)
	}
	return func() {
		trace.Stop()
		f.Close()
	}
}

func main() {
	o := parse(os.Args[1:])
	if o.clientOf != "" {
		stop := startTrace(o.goTrace)
		defer stop()
		runClient(o)
		return
	}
	stop := startTrace(o.goTrace)
	defer stop()
	runServer(o)
}
