// A cache-aside read with redigo on CACHE.GET … LEASE … WAIT: the hot-key read of the
// redigo article (GET + INCR counter + EXPIRE + compare update times in Lua) as one
// command, plus one source call per miss however many goroutines miss at once, and
// a VERSION that keeps an old writer from overwriting newer data.
//
// Server: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
// Build offline: GO111MODULE=off GOPATH=/usr/share/gocode go run main.go
// Prints "ok: go cache" and exits 0 on success; exits 1 on a failed check.
package main

import (
	"fmt"
	"log"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Source is the slow database behind the cache.
type Source struct {
	calls   int64
	value   string
	updated int64
}

func (s *Source) Read() (string, int64) {
	atomic.AddInt64(&s.calls, 1)
	time.Sleep(50 * time.Millisecond)
	return s.value, s.updated
}

// Get reads key through the cache: fresh values from Redis, one refresh per miss.
func Get(pool *redis.Pool, key string, src *Source) (string, error) {
	conn := pool.Get()
	defer conn.Close()
	reply, err := redis.Values(conn.Do("CACHE.GET", key, "LEASE", 2000, "WAIT", 2500))
	if err != nil {
		return "", err
	}
	value, _ := redis.String(reply[0], nil)
	lease, _ := redis.Int64(reply[1], nil)
	if lease == 0 && reply[0] != nil {
		return value, nil // fresh, or stale while another client refreshes
	}
	if lease == 0 {
		v, _ := src.Read() // the wait timed out
		return v, nil
	}
	fresh, updated := src.Read()
	if _, err := conn.Do("CACHE.SET", key, fresh, 60000, "STALE", 30000,
		"VERSION", updated, "LEASE", lease); err != nil {
		return "", err
	}
	return fresh, nil
}

func main() {
	addr := fmt.Sprintf("%s:%s", env("WARDEN_HOST", "127.0.0.1"), env("WARDEN_PORT", "6379"))
	pool := &redis.Pool{MaxIdle: 64, MaxActive: 64, Wait: true,
		Dial: func() (redis.Conn, error) { return redis.Dial("tcp", addr) }}
	defer pool.Close()
	conn := pool.Get()
	defer conn.Close()
	if _, err := conn.Do("DEL", "go:product:1", "go:product:2"); err != nil {
		log.Fatalf("FAIL: go cache: %v", err)
	}

	// 50 goroutines miss one key at once: exactly one source call.
	src := &Source{value: "lamp v1", updated: 1}
	var wg sync.WaitGroup
	results := make([]string, 50)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			v, err := Get(pool, "go:product:1", src)
			if err != nil {
				log.Fatalf("FAIL: go cache: %v", err)
			}
			results[i] = v
		}(i)
	}
	wg.Wait()
	for _, v := range results {
		if v != "lamp v1" {
			log.Fatalf("FAIL: go cache: a reader got %q", v)
		}
	}
	if calls := atomic.LoadInt64(&src.calls); calls != 1 {
		log.Fatalf("FAIL: go cache: 50 concurrent misses made %d source calls, want 1", calls)
	}

	// The seed's compare of update times: an older writer is refused, and a
	// reader who knows of newer data gets nil.
	ok, _ := redis.Int(conn.Do("CACHE.SET", "go:product:2", "v7", 60000, "VERSION", 7))
	old, _ := redis.Int(conn.Do("CACHE.SET", "go:product:2", "v6", 60000, "VERSION", 6))
	if ok != 1 || old != 0 {
		log.Fatalf("FAIL: go cache: SET replies %d, %d; want 1, 0", ok, old)
	}
	if v, err := conn.Do("CACHE.GET", "go:product:2", "MINVERSION", 8); err != nil || v != nil {
		log.Fatalf("FAIL: go cache: MINVERSION 8 read %v (%v), want nil", v, err)
	}
	// Read often, it stays fresh past its first ttl.
	conn.Do("CACHE.SET", "go:product:2", "v7", 200, "VERSION", 7)
	for i := 0; i < 3; i++ {
		conn.Do("CACHE.GET", "go:product:2", "HOT", 3, 1000, "EXTEND", 10000)
	}
	time.Sleep(300 * time.Millisecond)
	if v, _ := redis.String(conn.Do("CACHE.GET", "go:product:2")); v != "v7" {
		log.Fatalf("FAIL: go cache: the hot key expired (%q)", v)
	}
	fmt.Println("ok: go cache")
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
