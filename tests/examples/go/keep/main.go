// Locks that live as long as their holder's connection, with redigo:
// `DLOCK.ACQUIRE key owner ttl_ms KEEP` on a connection held for the lock's life,
// and a PSUBSCRIBE that tells the holder when its lock is taken from it.
//
// Scenarios (all run):
//
//	dedicated  a connection from pool.Get() takes a 900 ms lock with KEEP and is
//	           held while the work runs: 2.5 s later the lock is still held with
//	           the same token (the server renews it); RELEASE in a defer frees it.
//	pooled     the pitfall: the same lock taken on a pooled connection that is then
//	           returned to the pool (conn.Close()) is NOT released: the idle
//	           connection is still open, so the lock is still renewed 2.5 s later.
//	           Closing the pool closes the connection and frees it.
//	lost       a PSUBSCRIBE to __keyspace@0__:keep-go-* (notify-keyspace-events Kd):
//	           the holder's RELEASE sends dlock.release and no dlock.lost; a DEL of
//	           its held lock by another client sends dlock.lost, the holder stops,
//	           and its late RELEASE answers 0.
//
// Server: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
// Build offline: GO111MODULE=off GOPATH=/usr/share/gocode go run main.go
// Prints "ok: go keep …" lines and exits 0 on success, 1 on a failed check.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
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

func newPool() *redis.Pool {
	return &redis.Pool{
		MaxIdle: 4,
		Dial: func() (redis.Conn, error) {
			return redis.Dial("tcp", address(), redis.DialReadTimeout(15*time.Second))
		},
	}
}

func owner(role string) string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		log.Fatalf("FAIL: go keep: random: %v", err)
	}
	return fmt.Sprintf("%s:%d:%s:%s", host, os.Getpid(), role, hex.EncodeToString(b))
}

// holder returns the owner and token DLOCK.INFO shows for key ("", 0 when free).
func holder(c redis.Conn, key string) (string, int64) {
	v, err := redis.Values(c.Do("DLOCK.INFO", key))
	if err == redis.ErrNil {
		return "", 0
	}
	if err != nil {
		log.Fatalf("FAIL: go keep: DLOCK.INFO %s: %v", key, err)
	}
	var who string
	var token int64
	for i := 0; i+1 < len(v); i += 2 {
		name, _ := redis.String(v[i], nil)
		switch name {
		case "owner":
			who, _ = redis.String(v[i+1], nil)
		case "token":
			token, _ = redis.Int64(v[i+1], nil)
		}
	}
	return who, token
}

func check(ok bool, format string, args ...interface{}) {
	if !ok {
		log.Fatalf("FAIL: go keep: "+format, args...)
	}
}

func dedicated(pool *redis.Pool, admin redis.Conn) {
	key, me := "keep-go-dedicated", owner("dedicated")
	admin.Do("DEL", key)
	func() {
		conn := pool.Get() // this connection is the lock's for as long as it is held
		defer conn.Close()
		token, err := redis.Int64(conn.Do("DLOCK.ACQUIRE", key, me, 900, "KEEP"))
		check(err == nil, "dedicated: ACQUIRE … KEEP: %v", err)
		defer func() {
			n, err := redis.Int(conn.Do("DLOCK.RELEASE", key, me, "TOKEN", token))
			check(err == nil && n == 1, "dedicated: RELEASE answered %d, %v", n, err)
		}()
		time.Sleep(2500 * time.Millisecond) // the work: almost three ttls
		who, t := holder(admin, key)
		check(who == me && t == token, "dedicated: a kept lock lapsed while held: %q %d", who, t)
	}()
	n, _ := redis.Int(admin.Do("EXISTS", key))
	check(n == 0, "dedicated: the key outlived its RELEASE")
	fmt.Println("ok: go keep dedicated: a 900 ms kept lock held 2.5 s on one connection; RELEASE in a defer freed it")
}

func pooled(admin redis.Conn) {
	key, me := "keep-go-pooled", owner("pooled")
	admin.Do("DEL", key)
	pool := newPool()
	conn := pool.Get()
	token, err := redis.Int64(conn.Do("DLOCK.ACQUIRE", key, me, 900, "KEEP"))
	check(err == nil, "pooled: ACQUIRE … KEEP: %v", err)
	conn.Close() // back to the pool: the connection stays open, and so does the binding
	time.Sleep(2500 * time.Millisecond)
	who, t := holder(admin, key)
	check(who == me && t == token, "pooled: expected the lock still held by the idle pooled connection, got %q %d", who, t)
	pool.Close() // closes the idle connection: now the lock goes
	deadline := time.Now().Add(5 * time.Second)
	for {
		if who, _ := holder(admin, key); who == "" {
			break
		}
		check(time.Now().Before(deadline), "pooled: the lock outlived its connection")
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("ok: go keep pooled: a kept lock on a connection returned to the pool stayed held 2.5 s; closing the pool freed it")
}

func lost(pool *redis.Pool, admin redis.Conn) {
	key, me := "keep-go-lost", owner("lost")
	admin.Do("DEL", key)
	before, err := redis.Strings(admin.Do("CONFIG", "GET", "notify-keyspace-events"))
	check(err == nil && len(before) == 2, "lost: CONFIG GET: %v", err)
	defer admin.Do("CONFIG", "SET", "notify-keyspace-events", before[1])
	_, err = admin.Do("CONFIG", "SET", "notify-keyspace-events", "Kd")
	check(err == nil, "lost: CONFIG SET notify-keyspace-events: %v", err)

	// The subscription, before the lock is taken, on a connection of its own.
	sub, err := redis.Dial("tcp", address())
	check(err == nil, "lost: dial: %v", err)
	psc := redis.PubSubConn{Conn: sub}
	defer psc.Close()
	check(psc.PSubscribe("__keyspace@0__:keep-go-*") == nil, "lost: PSUBSCRIBE")
	events := make(chan string, 100)
	go func() {
		for {
			switch m := psc.Receive().(type) {
			case redis.Message:
				if strings.TrimPrefix(m.Channel, "__keyspace@0__:") == key {
					events <- string(m.Data)
				}
			case error:
				close(events)
				return
			}
		}
	}()
	quiet := func() []string {
		var got []string
		for {
			select {
			case e := <-events:
				got = append(got, e)
			case <-time.After(300 * time.Millisecond):
				return got
			}
		}
	}
	time.Sleep(100 * time.Millisecond) // the PSUBSCRIBE is in place

	conn := pool.Get()
	defer conn.Close()
	token, err := redis.Int64(conn.Do("DLOCK.ACQUIRE", key, me, 10000, "KEEP"))
	check(err == nil, "lost: ACQUIRE … KEEP: %v", err)
	n, err := redis.Int(conn.Do("DLOCK.RELEASE", key, me, "TOKEN", token))
	check(err == nil && n == 1, "lost: RELEASE answered %d, %v", n, err)
	got := quiet()
	check(strings.Join(got, ",") == "dlock.acquire,dlock.release", "lost: ACQUIRE then RELEASE sent %v", got)

	token, err = redis.Int64(conn.Do("DLOCK.ACQUIRE", key, me, 10000, "KEEP"))
	check(err == nil, "lost: ACQUIRE … KEEP again: %v", err)
	check(<-events == "dlock.acquire", "lost: no dlock.acquire")
	deleted := time.Now()
	_, err = admin.Do("DEL", key)
	check(err == nil, "lost: DEL: %v", err)
	select {
	case e := <-events:
		check(e == "dlock.lost", "lost: after the DEL the holder heard %q", e)
	case <-time.After(3 * time.Second):
		log.Fatalf("FAIL: go keep: lost: no dlock.lost within 3 s of the DEL")
	}
	took := time.Since(deleted)
	// The event names the key, not the grant: confirm the grant is gone.
	who, _ := holder(admin, key)
	check(who == "", "lost: the key still has a holder: %q", who)
	n, err = redis.Int(conn.Do("DLOCK.RELEASE", key, me, "TOKEN", token))
	check(err == nil && n == 0, "lost: the late RELEASE answered %d, %v", n, err)
	fmt.Printf("ok: go keep lost: RELEASE sent no dlock.lost; a DEL sent dlock.lost to the subscriber in %d ms; the late RELEASE answered 0\n",
		took.Milliseconds())
}

func main() {
	log.SetFlags(0)
	pool := newPool()
	defer pool.Close()
	admin := pool.Get()
	defer admin.Close()
	dedicated(pool, admin)
	pooled(admin)
	lost(pool, admin)
}
