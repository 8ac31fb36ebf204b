// A small Go program built by causeway-goruntime's tests with each Go toolchain at
// hand, with and without symbols: it uses what the recorder follows (channels, a
// mutex, sleeps, the network poller) so that the runtime's structures it reads are
// all in the binary. It is built, not run by the tests.
package main

import (
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

func serve(l net.Listener, done chan<- int) {
	c, err := l.Accept()
	if err != nil {
		done <- 0
		return
	}
	buf := make([]byte, 64)
	n, _ := c.Read(buf)
	c.Close()
	done <- n
}

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	done := make(chan int)
	go serve(l, done)
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	c.Write([]byte("hello"))
	c.Close()
	var mu sync.Mutex
	mu.Lock()
	go func() { time.Sleep(time.Millisecond); mu.Unlock() }()
	mu.Lock()
	fmt.Println(<-done)
}
