// Seed 000's counter with the fencing enforced by Redis itself (redigo).
//
// Five goroutines each add to one counter, one increment per lock grant. The
// increment is `DLOCK.GUARD counter-lock <owner> <token> INCR counter`: Redis runs the
// INCR only while the worker holds the lock with that token, in the same step as the
// check. Nothing compares tokens in Lua.
//
// Scenarios (both run):
//
//	workers  5 goroutines × 20 increments, each under its own grant (ACQUIRE … WAIT,
//	         GUARD INCR, RELEASE … TOKEN): the counter ends at exactly 100.
//	paused   a holder with a 300 ms lease pauses for 600 ms (GC, a frozen VM);
//	         another worker takes the lock. The paused one's guarded write is
//	         refused with FENCED and the counter keeps the new holder's value.
//
// Server: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
// Build offline: GO111MODULE=off GOPATH=/usr/share/gocode go run main.go
// Prints "ok: go guarded_counter …" lines and exits 0 on success, 1 on a failed check.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
)

const (
	lockKey    = "guarded-counter-lock"
	counterKey = "guarded-counter"
	workers    = 5
	steps      = 20
)

func address() string {
	host, port := os.Getenv("WARDEN_HOST"), os.Getenv("WARDEN_PORT")
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "6379"
	}
	return host + ":" + port
}

func dial() redis.Conn {
	c, err := redis.Dial("tcp", address(), redis.DialReadTimeout(15*time.Second))
	if err != nil {
		log.Fatalf("FAIL: go guarded_counter: dial: %v", err)
	}
	return c
}

// owner names one holder: host, process, worker and a random part.
func owner(worker int) string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		log.Fatalf("FAIL: go guarded_counter: random owner: %v", err)
	}
	return fmt.Sprintf("%s:%d:%d:%s", host, os.Getpid(), worker, hex.EncodeToString(b))
}

// guardedIncr increments the counter only while `me` holds the lock with `token`.
func guardedIncr(c redis.Conn, me string, token int64) (int64, error) {
	return redis.Int64(c.Do("DLOCK.GUARD", lockKey, me, token, "INCR", counterKey))
}

func runWorkers() {
	c := dial()
	defer c.Close()
	if _, err := c.Do("DEL", counterKey); err != nil {
		log.Fatalf("FAIL: go guarded_counter: DEL: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers*steps)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			conn := dial()
			defer conn.Close()
			me := owner(w)
			for i := 0; i < steps; i++ {
				token, err := redis.Int64(conn.Do("DLOCK.ACQUIRE", lockKey, me, 5000, "WAIT", 10000))
				if err != nil {
					errs <- fmt.Errorf("ACQUIRE … WAIT: %v", err)
					return
				}
				if _, err := guardedIncr(conn, me, token); err != nil {
					errs <- fmt.Errorf("GUARD INCR: %v", err)
					return
				}
				released, err := redis.Int(conn.Do("DLOCK.RELEASE", lockKey, me, "TOKEN", token))
				if err != nil || released != 1 {
					errs <- fmt.Errorf("RELEASE … TOKEN: %d %v", released, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		log.Fatalf("FAIL: go guarded_counter: workers: %v", err)
	}
	total, err := redis.Int(c.Do("GET", counterKey))
	if err != nil || total != workers*steps {
		log.Fatalf("FAIL: go guarded_counter: workers: counter %d (%v), expected %d", total, err, workers*steps)
	}
	fmt.Printf("ok: go guarded_counter: workers: %d workers x %d guarded increments = %d\n", workers, steps, total)
}

func runPaused() {
	c := dial()
	defer c.Close()
	if _, err := c.Do("SET", counterKey, 0); err != nil {
		log.Fatalf("FAIL: go guarded_counter: SET: %v", err)
	}
	slow, fast := owner(100), owner(101)
	slowToken, err := redis.Int64(c.Do("DLOCK.ACQUIRE", lockKey, slow, 300))
	if err != nil {
		log.Fatalf("FAIL: go guarded_counter: paused: the lock was not free: %v", err)
	}
	time.Sleep(600 * time.Millisecond) // the pause: the lease ends meanwhile
	fastToken, err := redis.Int64(c.Do("DLOCK.ACQUIRE", lockKey, fast, 5000))
	if err != nil || fastToken <= slowToken {
		log.Fatalf("FAIL: go guarded_counter: paused: next grant %d (%v) after %d", fastToken, err, slowToken)
	}
	if n, err := guardedIncr(c, fast, fastToken); err != nil || n != 1 {
		log.Fatalf("FAIL: go guarded_counter: paused: the new holder's INCR gave %d, %v", n, err)
	}
	_, err = guardedIncr(c, slow, slowToken)
	if err == nil || !strings.HasPrefix(err.Error(), "FENCED") {
		log.Fatalf("FAIL: go guarded_counter: paused: the stale write was not fenced: %v", err)
	}
	if v, err := redis.Int(c.Do("GET", counterKey)); err != nil || v != 1 {
		log.Fatalf("FAIL: go guarded_counter: paused: counter %d (%v) after the refused write", v, err)
	}
	if _, err := c.Do("DLOCK.RELEASE", lockKey, fast, "TOKEN", fastToken); err != nil {
		log.Fatalf("FAIL: go guarded_counter: paused: RELEASE: %v", err)
	}
	fmt.Println("ok: go guarded_counter: paused: the paused holder's write was refused with FENCED")
}

func main() {
	runWorkers()
	runPaused()
}
