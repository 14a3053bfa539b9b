// Five workers increment a counter under a distributed lock: the SETNX + EXPIRE
// lock that Go articles build from two Lua scripts, on warden's DLOCK commands.
//
// The Lua version polls (`if !ok { time.Sleep(100ms); continue }`), has no fencing
// token and is not re-entrant. Here a worker blocks in the server with
// `DLOCK.ACQUIRE key id ttl WAIT timeout` and is handed the lock the moment the
// previous holder releases it; the reply is a fencing token that strictly increases
// on every grant.
//
// Server: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
// Build offline: GO111MODULE=off GOPATH=/usr/share/gocode go run main.go
// Prints "ok: go lock" and exits 0 on success; exits 1 on a failed check.
package main

import (
	"fmt"
	"log"
	"os"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
)

// RedisLock is a warden lock on one key.
type RedisLock struct {
	key        string
	expiration time.Duration // lease, so a crashed holder cannot block everyone
}

func NewLock(key string, expiration time.Duration) *RedisLock {
	return &RedisLock{key: key, expiration: expiration}
}

// Lock waits up to `wait` for the lock. It returns the fencing token and true when
// granted, 0 and false when the wait timed out. A blocked acquire occupies its
// connection, so each worker passes its own.
func (l *RedisLock) Lock(conn redis.Conn, id string, wait time.Duration) (int64, bool, error) {
	token, err := redis.Int64(conn.Do("DLOCK.ACQUIRE", l.key, id,
		l.expiration.Milliseconds(), "WAIT", wait.Milliseconds()))
	if err == redis.ErrNil {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return token, true, nil
}

// Unlock releases the lock if `id` holds it: no Lua compare-and-delete needed.
func (l *RedisLock) Unlock(conn redis.Conn, id string) (bool, error) {
	n, err := redis.Int(conn.Do("DLOCK.RELEASE", l.key, id))
	return n == 1, err
}

func addr() string {
	host := os.Getenv("WARDEN_HOST")
	if host == "" {
		host = "127.0.0.1"
	}
	port := os.Getenv("WARDEN_PORT")
	if port == "" {
		port = "6379"
	}
	return host + ":" + port
}

func main() {
	pool := &redis.Pool{
		MaxIdle:     8,
		MaxActive:   0,
		IdleTimeout: 100 * time.Second,
		Dial: func() (redis.Conn, error) {
			return redis.Dial("tcp", addr(), redis.DialConnectTimeout(5*time.Second))
		},
	}
	defer pool.Close()

	admin := pool.Get()
	if _, err := admin.Do("DEL", "counter", "counter:value"); err != nil {
		log.Fatalf("FAIL: go lock: %v", err)
	}
	admin.Close()

	lock := NewLock("counter", 30*time.Second)
	// The original incremented an in-process int; here the counter is a Redis key,
	// so the lock must protect it across processes, not just goroutines.
	var (
		mu     sync.Mutex // guards grants and fails (Go bookkeeping, not the counter)
		grants []int64
		fails  []string
	)
	fail := func(format string, args ...interface{}) {
		mu.Lock()
		fails = append(fails, fmt.Sprintf(format, args...))
		mu.Unlock()
	}

	worker := func(i int) {
		conn := pool.Get()
		defer conn.Close()
		id := fmt.Sprintf("worker%d", i)
		token, ok, err := lock.Lock(conn, id, 5*time.Second)
		log.Printf("worker %d obtained lock: %v, token: %d, err: %v", i, ok, token, err)
		if err != nil || !ok {
			fail("worker %d: lock not obtained (err %v)", i, err)
			return
		}
		mu.Lock()
		grants = append(grants, token)
		mu.Unlock()

		// A read-modify-write that loses updates without the lock.
		v, err := redis.Int(conn.Do("GET", "counter:value"))
		if err != nil && err != redis.ErrNil {
			fail("worker %d: GET: %v", i, err)
		}
		time.Sleep(20 * time.Millisecond)
		if _, err := conn.Do("SET", "counter:value", v+1); err != nil {
			fail("worker %d: SET: %v", i, err)
		}
		log.Printf("worker %d, add counter %d", i, v+1)

		released, err := lock.Unlock(conn, id)
		if err != nil || !released {
			fail("worker %d: unlock: released=%v err=%v", i, released, err)
		}
	}

	wg := sync.WaitGroup{}
	for i := 1; i <= 5; i++ {
		wg.Add(1)
		id := i
		go func() {
			defer wg.Done()
			worker(id)
		}()
	}
	wg.Wait()

	conn := pool.Get()
	defer conn.Close()
	value, err := redis.Int(conn.Do("GET", "counter:value"))
	if err != nil {
		fail("GET counter:value: %v", err)
	}
	if value != 5 {
		fail("counter is %d, want 5", value)
	}
	if len(grants) != 5 {
		fail("%d grants, want 5", len(grants))
	}
	for i := 1; i < len(grants); i++ {
		if grants[i] <= grants[i-1] {
			fail("fencing tokens do not strictly increase in grant order: %v", grants)
			break
		}
	}
	if info, err := conn.Do("DLOCK.INFO", "counter"); err != nil || info != nil {
		fail("lock still held after all workers released it: %v %v", info, err)
	}
	conn.Do("DEL", "counter:value")

	if len(fails) > 0 {
		for _, f := range fails {
			fmt.Fprintln(os.Stderr, "FAIL: go lock:", f)
		}
		os.Exit(1)
	}
	fmt.Println("ok: go lock")
}
