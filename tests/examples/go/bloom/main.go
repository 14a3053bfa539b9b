// A crawler's "already fetched?" check on a Bloom filter: the Go article's
// SETBIT/GETBIT Lua scripts over 14 murmur3 hashes, on warden's BF.*X commands.
//
// The original sets 14 bits per URL in a 2^16-bit string (about 3,200 URLs at a
// 2^-14 ≈ 0.006% false-positive rate) and needs both scripts and the hashing in
// every client. Here the filter is sized by what you want (error rate, capacity),
// grows when full, and hashing lives in the server.
//
// Server: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
// Build offline: GO111MODULE=off GOPATH=/usr/share/gocode go run main.go
// Prints "ok: go bloom" and exits 0 on success; exits 1 on a failed check.
package main

import (
	"fmt"
	"log"
	"os"
	"time"

	"github.com/gomodule/redigo/redis"
)

type BloomFilter struct {
	pool *redis.Pool
	key  string // the key in Redis
}

// NewBloomFilter starts an empty filter (the original also deleted the key first).
func NewBloomFilter(pool *redis.Pool, key string, errorRate float64, capacity int) (*BloomFilter, error) {
	conn := pool.Get()
	defer conn.Close()
	if _, err := conn.Do("DEL", key); err != nil {
		return nil, err
	}
	if _, err := redis.String(conn.Do("BF.RESERVEX", key, errorRate, capacity)); err != nil {
		return nil, err
	}
	return &BloomFilter{pool: pool, key: key}, nil
}

// Add reports whether data was new.
func (f *BloomFilter) Add(data []byte) (bool, error) {
	conn := f.pool.Get()
	defer conn.Close()
	n, err := redis.Int(conn.Do("BF.ADDX", f.key, data))
	return n == 1, err
}

// AddBatch adds many items in one round trip; one flag per item, true if new.
func (f *BloomFilter) AddBatch(items []string) ([]bool, error) {
	conn := f.pool.Get()
	defer conn.Close()
	args := redis.Args{f.key}.AddFlat(items)
	flags, err := redis.Ints(conn.Do("BF.MADDX", args...))
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(flags))
	for i, v := range flags {
		out[i] = v == 1
	}
	return out, nil
}

func (f *BloomFilter) Exists(data []byte) (bool, error) {
	conn := f.pool.Get()
	defer conn.Close()
	n, err := redis.Int(conn.Do("BF.EXISTSX", f.key, data))
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

var failed bool

func check(cond bool, format string, args ...interface{}) {
	if !cond {
		failed = true
		fmt.Fprintf(os.Stderr, "FAIL: go bloom: "+format+"\n", args...)
	}
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

	bf, err := NewBloomFilter(pool, "bf-test", 0.0001, 3000)
	if err != nil {
		log.Fatalf("FAIL: go bloom: %v", err)
	}

	// The original's run: exists false, add, exists true, another item false.
	exists, err := bf.Exists([]byte("test1"))
	log.Printf("exist %t, err %v", exists, err)
	check(err == nil && !exists, "test1 before add: exists=%v err=%v", exists, err)
	added, err := bf.Add([]byte("test1"))
	check(err == nil && added, "add test1: new=%v err=%v", added, err)
	exists, err = bf.Exists([]byte("test1"))
	log.Printf("exist %t, err %v", exists, err)
	check(err == nil && exists, "test1 after add: exists=%v err=%v", exists, err)
	exists, err = bf.Exists([]byte("test2"))
	log.Printf("exist %t, err %v", exists, err)
	check(err == nil && !exists, "test2: exists=%v err=%v", exists, err)
	added, err = bf.Add([]byte("test1"))
	check(err == nil && !added, "add test1 again: new=%v err=%v", added, err)

	// The crawler: each page yields links, some seen before; fetch only new ones.
	seen := map[string]bool{"test1": true}
	fetched := 0
	for page := 0; page < 40; page++ {
		var links []string
		for i := 0; i < 25; i++ {
			links = append(links, fmt.Sprintf("https://example.com/p%d/%d", page, i))
		}
		for p := page - 2; p < page; p++ { // links back to earlier pages
			if p >= 0 {
				links = append(links, fmt.Sprintf("https://example.com/p%d/%d", p, 0))
			}
		}
		links = append(links, links[0]) // a link repeated on the same page
		flags, err := bf.AddBatch(links)
		if err != nil {
			log.Fatalf("FAIL: go bloom: BF.MADDX: %v", err)
		}
		check(len(flags) == len(links), "page %d: %d flags for %d links", page, len(flags), len(links))
		for i, isNew := range flags {
			wasSeen := seen[links[i]]
			// Fixed hashing makes this deterministic; at this load and error rate
			// no false positive hides a new link.
			check(isNew == !wasSeen, "page %d: %s new=%v, seen before=%v", page, links[i], isNew, wasSeen)
			if isNew {
				fetched++
			}
			seen[links[i]] = true
		}
	}
	check(fetched == len(seen)-1, "fetched %d pages, want %d", fetched, len(seen)-1)

	// No false negatives.
	for url := range seen {
		ok, err := bf.Exists([]byte(url))
		check(err == nil && ok, "%s added but BF.EXISTSX says absent (err %v)", url, err)
	}
	conn := pool.Get()
	card, err := redis.Int(conn.Do("BF.CARDX", "bf-test"))
	check(err == nil && card == len(seen), "BF.CARDX %d (err %v), want %d", card, err, len(seen))
	conn.Do("DEL", "bf-test")
	conn.Close()
	log.Printf("fetched %d distinct URLs", fetched)

	if failed {
		os.Exit(1)
	}
	fmt.Println("ok: go bloom")
}
