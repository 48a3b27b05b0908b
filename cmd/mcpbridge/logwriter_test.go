package main

import (
	"bufio"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

// TestLogNeverBlocks writes far more than a pipe holds to a pipe nobody
// reads: no log call may block. Once the pipe is read, the lines come out
// in order, with one line counting those dropped in between, and the
// flush at exit writes the notice of lines dropped last. No goroutine is
// left once the lines are out.
func TestLogNeverBlocks(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	log, _, _, flush, err := newLogger(w, "info", "console")
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 200)
	const lines = 20000 // ~5 MB, far over the pipe's 64 KiB and maxLogBacklog
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		for i := range lines {
			log.Info("line", zap.Int("n", i), zap.String("pad", pad))
		}
	}()
	select {
	case <-logged:
	case <-time.After(10 * time.Second):
		r.Close() // unblocks the write
		<-logged
		t.Fatalf("%d log lines not written in 10s with stderr not read: logging blocked", lines)
	}

	// The host starts reading. Once the backlog is out, the notice of the
	// lines dropped comes with the next line (here Sync's); lines logged
	// after it are all kept, and the exit flushes them.
	read := make(chan string, 1024)
	go func() {
		defer close(read)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			read <- sc.Text()
		}
	}()
	var out []string
	deadline := time.Now().Add(30 * time.Second)
	for noticed := false; !noticed; {
		if time.Now().After(deadline) {
			t.Fatalf("no notice of the dropped lines after %d lines", len(out))
		}
		_ = log.Sync()
		for more := true; more && !noticed; {
			select {
			case line := <-read:
				out = append(out, line)
				noticed = strings.Contains(line, "log lines dropped")
			case <-time.After(100 * time.Millisecond):
				more = false
			}
		}
	}
	log.Info("after", zap.Int("n", lines))
	for i := range 3 {
		log.Info("line", zap.Int("n", lines+1+i), zap.String("pad", pad))
	}
	if err := flush(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	for line := range read {
		out = append(out, line)
	}

	num := regexp.MustCompile(`"n": (\d+)`)
	dropped := regexp.MustCompile(`log lines dropped: stderr was not being read\s+\{"dropped": (\d+)\}`)
	last, kept, counted, notices := -1, 0, 0, 0
	for _, line := range out {
		if m := dropped.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			counted += n
			notices++
			continue
		}
		m := num.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unexpected line %q", line)
		}
		n, _ := strconv.Atoi(m[1])
		if n <= last {
			t.Fatalf("line %d after line %d: out of order", n, last)
		}
		last = n
		kept++
	}
	if total := lines + 4; kept+counted != total || notices == 0 || last != lines+3 {
		t.Errorf("%d lines kept + %d counted as dropped (in %d notices), last %d; want %d in all, some dropped, the last line %d",
			kept, counted, notices, last, total, lines+3)
	}

	deadline = time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > goroutines {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: %d before, %d after\n%s", goroutines, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
