// Workers increment a counter under a distributed lock: the SETNX + EXPIRE lock
// that Go articles build from two Lua scripts, on warden's DLOCK commands, with
// what a real worker needs around it.
//
// The Lua version polls (`if !ok { time.Sleep(100ms); continue }`), has no fencing
// token and is not re-entrant. Here a worker blocks in the server with
// `DLOCK.ACQUIRE key owner ttl WAIT timeout` and is handed the lock the moment the
// previous holder releases it; the reply is a fencing token that strictly increases
// on every grant. Around it:
//
//   - a unique owner per process and worker (host:pid:worker:random);
//   - a read timeout longer than the WAIT (redis.DoWithTimeout), so the client does
//     not give up while the server still holds its place in the queue;
//   - a lease kept alive in the background (DLOCK.EXTEND every ttl/3) whose Lost()
//     channel closes when EXTEND answers 0 or fails: the work stops then;
//   - the fencing token passed to the protected write, which refuses a token smaller
//     than one it has seen (a Lua compare-and-set on the counter's hash).
//
// Scenarios (both run):
//
//	workers     5 goroutines increment the counter; tokens increase in grant order.
//	lease-lost  the lease is taken from a worker in the middle of a long job
//	            (PEXPIRE 1, as when a holder stalls past its lease) and another
//	            client takes the lock; the keepalive sees EXTEND answer 0 within
//	            ttl/3, the worker stops, and its stale write is refused.
//
// Server: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
// Build offline: GO111MODULE=off GOPATH=/usr/share/gocode go run main.go
// Prints "ok: go lock …" lines and exits 0 on success; exits 1 on a failed check.
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

// fencedSet is the protected write: it stores the value only if the token is at
// least the largest token the resource has seen, and remembers it.
var fencedSet = redis.NewScript(1, `
local fence = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
if tonumber(ARGV[1]) < fence then
  return redis.error_reply('FENCED token ' .. ARGV[1] .. ' is older than ' .. fence)
end
redis.call('HSET', KEYS[1], 'fence', ARGV[1], 'value', ARGV[2])
return 1`)

// isFenced tells whether a write was refused for carrying a stale token.
func isFenced(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "FENCED")
}

// uniqueOwner names one holder: host, process, worker and a random part (a pid
// is reused after a restart; the random part is not).
func uniqueOwner(worker string) string {
	host, _ := os.Hostname()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		log.Fatalf("FAIL: go lock: random owner: %v", err)
	}
	return fmt.Sprintf("%s:%d:%s:%s", host, os.Getpid(), worker, hex.EncodeToString(b))
}

// RedisLock is a warden lock on one key.
type RedisLock struct {
	key        string
	expiration time.Duration // lease, so a crashed holder cannot block everyone
}

func NewLock(key string, expiration time.Duration) *RedisLock {
	return &RedisLock{key: key, expiration: expiration}
}

// Lease is a granted lock: its fencing token, and (once Keepalive runs) a
// background DLOCK.EXTEND every ttl/3 that closes Lost() when the lease is gone.
type Lease struct {
	Token  int64
	lock   *RedisLock
	owner  string
	lost   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	Why    string    // why the lease was lost
	LostAt time.Time // when the keepalive noticed
}

// Lock waits up to `wait` for the lock. It returns the lease, or nil when the wait
// timed out. A blocked acquire occupies its connection, so each worker passes its
// own; the read timeout outlasts the WAIT.
func (l *RedisLock) Lock(conn redis.Conn, owner string, wait time.Duration) (*Lease, error) {
	token, err := redis.Int64(redis.DoWithTimeout(conn, wait+5*time.Second, "DLOCK.ACQUIRE",
		l.key, owner, l.expiration.Milliseconds(), "WAIT", wait.Milliseconds()))
	if err == redis.ErrNil {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &Lease{Token: token, lock: l, owner: owner, lost: make(chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{})}, nil
}

// Keepalive extends the lease every ttl/3 on connections from `pool` until Stop.
// Each EXTEND may take at most ttl/3; no retry, so a lease that cannot be
// confirmed is reported lost in time.
func (le *Lease) Keepalive(pool *redis.Pool) {
	period := le.lock.expiration / 3
	go func() {
		defer close(le.done)
		ticker := time.NewTicker(period)
		defer ticker.Stop()
		for {
			select {
			case <-le.stop:
				return
			case <-ticker.C:
			}
			conn := pool.Get()
			n, err := redis.Int(redis.DoWithTimeout(conn, period, "DLOCK.EXTEND",
				le.lock.key, le.owner, le.lock.expiration.Milliseconds()))
			conn.Close()
			if err != nil || n != 1 {
				le.Why = "EXTEND answered 0: the lock is no longer ours"
				if err != nil {
					le.Why = fmt.Sprintf("EXTEND failed: %v", err)
				}
				le.LostAt = time.Now()
				close(le.lost)
				return
			}
		}
	}()
}

// Lost is closed when the lease is lost: stop working under the lock.
func (le *Lease) Lost() <-chan struct{} { return le.lost }

// IsLost tells without blocking.
func (le *Lease) IsLost() bool {
	select {
	case <-le.lost:
		return true
	default:
		return false
	}
}

// Stop ends the keepalive (before releasing the lock).
func (le *Lease) Stop() {
	close(le.stop)
	<-le.done
}

// Unlock releases the lock if `owner` holds it: no Lua compare-and-delete needed.
func (l *RedisLock) Unlock(conn redis.Conn, owner string) (bool, error) {
	n, err := redis.Int(conn.Do("DLOCK.RELEASE", l.key, owner))
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

// checks collects failures from any goroutine.
type checks struct {
	mu    sync.Mutex
	fails []string
}

func (c *checks) fail(format string, args ...interface{}) {
	c.mu.Lock()
	c.fails = append(c.fails, fmt.Sprintf(format, args...))
	c.mu.Unlock()
}

func readCounter(conn redis.Conn) int {
	v, err := redis.Int(conn.Do("HGET", "counter:value", "value"))
	if err != nil && err != redis.ErrNil {
		log.Printf("HGET counter:value: %v", err)
	}
	return v
}

func workers(pool *redis.Pool, c *checks) {
	admin := pool.Get()
	defer admin.Close()
	admin.Do("DEL", "counter", "counter:value")
	lock := NewLock("counter", 6*time.Second)
	// The original incremented an in-process int; here the counter is a Redis key,
	// so the lock must protect it across processes, not just goroutines.
	var (
		mu     sync.Mutex // guards grants (Go bookkeeping, not the counter)
		grants []int64
	)
	worker := func(i int) {
		conn := pool.Get()
		defer conn.Close()
		owner := uniqueOwner(fmt.Sprintf("worker%d", i))
		lease, err := lock.Lock(conn, owner, 10*time.Second)
		if err != nil || lease == nil {
			c.fail("worker %d: lock not obtained (err %v)", i, err)
			return
		}
		lease.Keepalive(pool)
		log.Printf("worker %d obtained lock, token: %d", i, lease.Token)
		mu.Lock()
		grants = append(grants, lease.Token)
		mu.Unlock()

		// A read-modify-write that loses updates without the lock.
		v := readCounter(conn)
		time.Sleep(20 * time.Millisecond)
		if lease.IsLost() {
			c.fail("worker %d lost its lease: %s", i, lease.Why)
		} else if _, err := fencedSet.Do(conn, "counter:value", lease.Token, v+1); err != nil {
			c.fail("worker %d: fenced write: %v", i, err)
		}
		log.Printf("worker %d, add counter %d", i, v+1)
		lease.Stop()
		released, err := lock.Unlock(conn, owner)
		if err != nil || !released {
			c.fail("worker %d: unlock: released=%v err=%v", i, released, err)
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

	if value := readCounter(admin); value != 5 {
		c.fail("counter is %d, want 5", value)
	}
	if len(grants) != 5 {
		c.fail("%d grants, want 5", len(grants))
	}
	for i := 1; i < len(grants); i++ {
		if grants[i] <= grants[i-1] {
			c.fail("fencing tokens do not strictly increase in grant order: %v", grants)
			break
		}
	}
	if info, err := admin.Do("DLOCK.INFO", "counter"); err != nil || info != nil {
		c.fail("lock still held after all workers released it: %v %v", info, err)
	}
	admin.Do("DEL", "counter:value")
	fmt.Println("ok: go lock (5 workers, fenced writes)")
}

// leaseLost: the lease is taken from a worker mid-job; it must notice within
// ttl/3, stop, and its late write must be refused by the fenced store.
func leaseLost(pool *redis.Pool, c *checks) {
	admin := pool.Get()
	defer admin.Close()
	admin.Do("DEL", "counter", "counter:value")
	ttl, steps, step := 1500*time.Millisecond, 40, 50*time.Millisecond // 2 s job, 1.5 s lease
	lock := NewLock("counter", ttl)
	conn := pool.Get()
	defer conn.Close()
	owner := uniqueOwner("long-job")
	lease, err := lock.Lock(conn, owner, 0)
	if err != nil || lease == nil {
		c.fail("lease-lost: the free lock was not granted (err %v)", err)
		return
	}
	lease.Keepalive(pool)

	var thiefToken int64
	var thiefAt time.Time
	taken := make(chan struct{})
	go func() {
		defer close(taken)
		// As if the holder stalled past its lease: the lease ends now, and another
		// client is granted the lock and writes with its (larger) token.
		time.Sleep(400 * time.Millisecond)
		other := pool.Get()
		defer other.Close()
		other.Do("PEXPIRE", "counter", 1)
		l, err := lock.Lock(other, uniqueOwner("thief"), 5*time.Second)
		if err != nil || l == nil {
			c.fail("lease-lost: the other client did not get the lock (err %v)", err)
			return
		}
		thiefToken, thiefAt = l.Token, time.Now()
		if _, err := fencedSet.Do(other, "counter:value", l.Token, 1000); err != nil {
			c.fail("lease-lost: the new holder's write: %v", err)
		}
	}()

	done := 0
	var stoppedAt time.Time
work:
	for ; done < steps; done++ {
		select {
		case <-lease.Lost():
			break work
		default:
		}
		v := readCounter(conn)
		time.Sleep(step)
		if _, err := fencedSet.Do(conn, "counter:value", lease.Token, v+1); err != nil && !isFenced(err) {
			c.fail("lease-lost: write: %v", err)
		}
	}
	stoppedAt = time.Now()
	lease.Stop()
	<-taken
	if !lease.IsLost() {
		c.fail("lease-lost: the worker never noticed; it finished all %d steps", steps)
		return
	}
	if thiefToken == 0 {
		return // reported by the goroutine
	}
	log.Printf("lease lost: %s; %d of %d steps done; detected %+d ms after the other grant",
		lease.Why, done, steps, lease.LostAt.Sub(thiefAt).Milliseconds())
	if lease.LostAt.Sub(thiefAt) > ttl/3+500*time.Millisecond {
		c.fail("lease-lost: the keepalive took longer than ttl/3 to notice")
	}
	if stoppedAt.Sub(lease.LostAt) > step+500*time.Millisecond {
		c.fail("lease-lost: the worker went on after the lease was lost")
	}
	if thiefToken <= lease.Token {
		c.fail("lease-lost: the new token %d is not above %d", thiefToken, lease.Token)
	}
	// The stale holder's write arrives late: the fenced store refuses it.
	if _, err := fencedSet.Do(conn, "counter:value", lease.Token, 999999); !isFenced(err) {
		c.fail("lease-lost: a write with the old token was not refused (err %v)", err)
	}
	if v := readCounter(admin); v != 1000 {
		c.fail("lease-lost: the counter is %d, want the new holder's 1000", v)
	}
	if released, _ := lock.Unlock(conn, owner); released {
		c.fail("lease-lost: RELEASE by the old holder freed the new holder's lock")
	}
	admin.Do("DEL", "counter", "counter:value")
	fmt.Println("ok: go lock (lease lost: the worker stopped, its stale write was fenced)")
}

func main() {
	pool := &redis.Pool{
		MaxIdle:     8,
		MaxActive:   0,
		IdleTimeout: 100 * time.Second,
		Dial: func() (redis.Conn, error) {
			return redis.Dial("tcp", addr(), redis.DialConnectTimeout(5*time.Second),
				redis.DialReadTimeout(5*time.Second))
		},
	}
	defer pool.Close()

	c := &checks{}
	workers(pool, c)
	if len(c.fails) == 0 {
		leaseLost(pool, c)
	}
	if len(c.fails) > 0 {
		for _, f := range c.fails {
			fmt.Fprintln(os.Stderr, "FAIL: go lock:", f)
		}
		os.Exit(1)
	}
}
