// Revoked session tokens on a warden cuckoo filter (redigo): deletion is the
// point.
//
// An API gateway must refuse revoked tokens on every request, fast, without a
// database lookup. Revocations are added to a cuckoo filter (CF.ADDX); a
// request whose token the filter does not know is let through at once (no
// false negatives), one it knows is checked against the store (a false
// positive costs one lookup). When a revoked token expires for good it is
// deleted from the filter (CF.DELX), so the filter holds only live
// revocations and never needs a rebuild, which a Bloom filter would.
//
// Server: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
// Build offline: GO111MODULE=off GOPATH=/usr/share/gocode go run main.go
// Prints "ok: go revoked" and exits 0 on success; exits 1 on a failed check.
package main

import (
	"fmt"
	"log"
	"os"

	"github.com/gomodule/redigo/redis"
)

const key = "gateway:revoked"

func token(i int) string { return fmt.Sprintf("tok-%08d", i) }

// info0 is the filter's number of sub-filters (1: it never had to grow).
func info0(c redis.Conn) int64 {
	items, _ := redis.Values(c.Do("CF.INFOX", key))
	for i := 0; i+1 < len(items); i += 2 {
		if label, _ := redis.String(items[i], nil); label == "Number of filters" {
			n, _ := redis.Int64(items[i+1], nil)
			return n
		}
	}
	return -1
}

func main() {
	host := os.Getenv("WARDEN_HOST")
	if host == "" {
		host = "127.0.0.1"
	}
	port := os.Getenv("WARDEN_PORT")
	if port == "" {
		port = "6379"
	}
	c, err := redis.Dial("tcp", host+":"+port)
	if err != nil {
		log.Fatalf("FAIL: go revoked: %v", err)
	}
	defer c.Close()
	fail := func(format string, args ...interface{}) {
		log.Fatalf("FAIL: go revoked: "+format, args...)
	}
	if _, err := c.Do("DEL", key); err != nil {
		fail("%v", err)
	}
	if _, err := redis.String(c.Do("CF.RESERVEX", key, 25000, "BUCKETSIZE", 4)); err != nil {
		fail("reserve: %v", err)
	}
	revoked := map[int]bool{}
	// Each round revokes 2,000 tokens and lets the 1,000 oldest revocations
	// expire (deleted from the filter): the filter stays small however long it runs.
	order := []int{}
	next := 0
	for round := 0; round < 20; round++ {
		for i := 0; i < 2000; i++ {
			t := next
			next++
			c.Send("CF.ADDX", key, token(t))
			revoked[t] = true
			order = append(order, t)
		}
		expire := order[:1000]
		order = order[1000:]
		for _, t := range expire {
			c.Send("CF.DELX", key, token(t))
			delete(revoked, t)
		}
		c.Flush()
		for i := 0; i < 3000; i++ {
			n, err := redis.Int(c.Receive())
			if err != nil || n != 1 {
				fail("round %d: reply %d (%v): every add stores, every delete finds", round, n, err)
			}
		}
	}
	// Every live revocation is refused; expired ones and fresh tokens pass
	// except for the filter's false positives.
	falsePositives, checked := 0, 0
	for t := 0; t < next+20000; t++ {
		c.Send("CF.EXISTSX", key, token(t))
	}
	c.Flush()
	for t := 0; t < next+20000; t++ {
		n, err := redis.Int(c.Receive())
		if err != nil {
			fail("exists: %v", err)
		}
		if revoked[t] && n != 1 {
			fail("revoked token %s let through (a false negative)", token(t))
		}
		if !revoked[t] {
			checked++
			falsePositives += n
		}
	}
	rate := float64(falsePositives) / float64(checked)
	if rate > 0.02 || info0(c) != 1 {
		fail("%d of %d valid tokens sent to the store (%.2f%%), %d sub-filters", falsePositives, checked, 100*rate, info0(c))
	}
	items, err := redis.Values(c.Do("CF.INFOX", key))
	if err != nil {
		fail("info: %v", err)
	}
	info := map[string]int64{}
	for i := 0; i+1 < len(items); i += 2 {
		label, _ := redis.String(items[i], nil)
		v, _ := redis.Int64(items[i+1], nil)
		info[label] = v
	}
	if info["Number of items inserted"] != int64(len(revoked)) {
		fail("CF.INFOX holds %d, want %d live revocations", info["Number of items inserted"], len(revoked))
	}
	fmt.Printf("ok: go revoked: %d live revocations of %d ever, none let through; %.2f%% of %d valid tokens checked against the store; %d sub-filter(s)\n",
		len(revoked), next, 100*rate, checked, info["Number of filters"])
}
