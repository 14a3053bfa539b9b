// A distributed token-bucket limiter with golang.org/x/time/rate's Wait/Allow API:
// the Go article's Lua reserveN script (qps, burst, now, cost, max_wait) on warden's
// RL.TOKEN, plus the leaky bucket of the companion article on RL.LEAKY.
//
// The Lua version takes `now` from the client (clients with skewed clocks disagree),
// rounds waits up to whole seconds, and has to be shipped to every service. RL.TOKEN
// keeps time on the server's clock with exact arithmetic and replies
// [allowed, remaining, wait_ms, reset_ms]: with MAXWAIT a call beyond the burst
// reserves its token and is told how long to wait before acting.
//
// Server: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
// Build offline: GO111MODULE=off GOPATH=/usr/share/gocode go run main.go
// Prints "ok: go limiter" and exits 0 on success; exits 1 on a failed check.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/gomodule/redigo/redis"
)

// RedisLimiter allows `qps` events per second with bursts of up to `burst`.
type RedisLimiter struct {
	pool     *redis.Pool
	qps      float64
	burst    int
	limitKey string
}

func NewRedisLimiter(pool *redis.Pool, qps float64, burst int, key string) *RedisLimiter {
	return &RedisLimiter{pool: pool, qps: qps, burst: burst, limitKey: key}
}

// Reservation is the answer of one RL.TOKEN call.
type Reservation struct {
	OK        bool
	Remaining int64
	Wait      time.Duration // allowed: act after this; denied: retry after this (-1: never)
	Reset     time.Duration // until the bucket is full again
}

// ReserveN asks for n tokens, accepting to wait up to maxWait for them.
func (lim *RedisLimiter) ReserveN(n int, maxWait time.Duration) (*Reservation, error) {
	conn := lim.pool.Get()
	defer conn.Close()
	args := redis.Args{lim.limitKey, lim.qps, lim.burst, "COST", n}
	if maxWait > 0 {
		args = args.Add("MAXWAIT", maxWait.Milliseconds())
	}
	r, err := redis.Int64s(conn.Do("RL.TOKEN", args...))
	if err != nil {
		return nil, err
	}
	if len(r) != 4 {
		return nil, fmt.Errorf("RL.TOKEN replied %v, want 4 integers", r)
	}
	return &Reservation{
		OK:        r[0] == 1,
		Remaining: r[1],
		Wait:      time.Duration(r[2]) * time.Millisecond,
		Reset:     time.Duration(r[3]) * time.Millisecond,
	}, nil
}

// Allow reports whether one event may happen now (never waits, never reserves).
func (lim *RedisLimiter) Allow() (bool, error) {
	r, err := lim.ReserveN(1, 0)
	if err != nil {
		return false, err
	}
	return r.OK, nil
}

// Wait blocks until one event may happen, or fails if that is after ctx's deadline.
func (lim *RedisLimiter) Wait(ctx context.Context) error {
	maxWait := time.Hour
	if d, ok := ctx.Deadline(); ok {
		maxWait = time.Until(d)
	}
	r, err := lim.ReserveN(1, maxWait)
	if err != nil {
		return err
	}
	if !r.OK {
		return errors.New("rate: Wait would exceed context deadline")
	}
	if r.Wait > 0 {
		t := time.NewTimer(r.Wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err() // the reserved token is spent; x/time/rate would cancel it
		}
	}
	return nil
}

// Reset forgets the bucket's state.
func (lim *RedisLimiter) Reset() error {
	conn := lim.pool.Get()
	defer conn.Close()
	_, err := conn.Do("DEL", lim.limitKey)
	return err
}

// TryLeakyBucket is the companion article's leaky bucket: the level drains at
// `rate` per second and a call passes if it still fits in `capacity`.
func TryLeakyBucket(pool *redis.Pool, key string, capacity int, rate int) (bool, time.Duration, error) {
	conn := pool.Get()
	defer conn.Close()
	r, err := redis.Int64s(conn.Do("RL.LEAKY", key, rate, capacity))
	if err != nil {
		return false, 0, err
	}
	return r[0] == 1, time.Duration(r[2]) * time.Millisecond, nil
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

var failed bool

func check(cond bool, format string, args ...interface{}) {
	if !cond {
		failed = true
		fmt.Fprintf(os.Stderr, "FAIL: go limiter: "+format+"\n", args...)
	}
}

func near(got, want, tolerance time.Duration) bool {
	d := got - want
	return d >= -tolerance && d <= tolerance
}

func main() {
	pool := &redis.Pool{
		MaxIdle:     8,
		IdleTimeout: 100 * time.Second,
		Dial: func() (redis.Conn, error) {
			return redis.Dial("tcp", addr(), redis.DialConnectTimeout(5*time.Second))
		},
	}
	defer pool.Close()

	// The article's run: qps 1, burst 2, five Waits → at 0 s, 0 s, 1 s, 2 s, 3 s.
	r := NewRedisLimiter(pool, 1, 2, "testrate")
	if err := r.Reset(); err != nil {
		log.Fatalf("FAIL: go limiter: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	for i := 0; i < 5; i++ {
		err := r.Wait(ctx)
		at := time.Since(start)
		log.Printf("worker %d allowed: %v (after %v)", i, err, at.Round(time.Millisecond))
		want := time.Duration(0)
		if i >= 2 {
			want = time.Duration(i-1) * time.Second
		}
		check(err == nil, "Wait %d: %v", i, err)
		check(near(at, want, 150*time.Millisecond), "Wait %d returned after %v, want about %v", i, at, want)
	}

	// Allow on an empty bucket: denied, retry in about 1 s; a Wait whose deadline is
	// too close fails at once without reserving.
	ok, err := r.Allow()
	check(err == nil && !ok, "Allow right after the burst: ok=%v err=%v", ok, err)
	short, cancelShort := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancelShort()
	t0 := time.Now()
	err = r.Wait(short)
	check(err != nil && time.Since(t0) < 100*time.Millisecond, "Wait with a 200 ms deadline: err=%v after %v", err, time.Since(t0))
	res, err := r.ReserveN(1, 0)
	check(err == nil && !res.OK && near(res.Wait, time.Second, 150*time.Millisecond),
		"a denied call should retry after about 1 s: %+v err=%v", res, err)
	res, err = r.ReserveN(3, time.Minute) // more than the burst: never
	check(err == nil && !res.OK && res.Wait < 0, "COST above burst: %+v err=%v", res, err)
	r.Reset()

	// The leaky bucket: capacity 5 draining at 10/s passes 5 at once, then one per 100 ms.
	conn := pool.Get()
	conn.Do("DEL", "leaky")
	conn.Close()
	passed := 0
	var retry time.Duration
	for i := 0; i < 6; i++ {
		ok, wait, err := TryLeakyBucket(pool, "leaky", 5, 10)
		check(err == nil, "RL.LEAKY: %v", err)
		if ok {
			passed++
		} else {
			retry = wait
		}
	}
	check(passed == 5, "leaky bucket passed %d of 6 at once, want 5", passed)
	check(retry > 0 && retry <= 100*time.Millisecond, "leaky bucket retry after %v, want (0, 100ms]", retry)
	time.Sleep(retry + 10*time.Millisecond)
	ok, _, err = TryLeakyBucket(pool, "leaky", 5, 10)
	check(err == nil && ok, "leaky bucket after draining: ok=%v err=%v", ok, err)
	conn = pool.Get()
	conn.Do("DEL", "leaky")
	conn.Close()

	if failed {
		os.Exit(1)
	}
	fmt.Println("ok: go limiter")
}
