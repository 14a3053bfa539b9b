// A crawler's "already fetched?" check on a Bloom filter: the Go article's
// SETBIT/GETBIT Lua scripts over 14 murmur3 hashes, on warden's BF.*X commands.
//
// The original sets 14 bits per URL in a 2^16-bit string (about 3,200 URLs at a
// 2^-14 ≈ 0.006% false-positive rate) and needs both scripts and the hashing in
// every client. Here the filter is sized by what you want (error rate, capacity),
// grows when full, and hashing lives in the server.
//
// Then re-visits: a crawler that must fetch a page again once its re-visit
// window has passed keeps "fetched lately" in an aging filter (BF.RESERVEX …
// AGE window_ms): a page fetched at t answers 1 until at least t + window and
// 0 from t + window × 1.25 on, with no expiry bookkeeping in the client.
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

// NewAgingBloomFilter starts an empty filter whose items age out: each is
// present for window after its last add, and gone by window × 1.25.
func NewAgingBloomFilter(pool *redis.Pool, key string, errorRate float64, capacity int, window time.Duration) (*BloomFilter, error) {
	conn := pool.Get()
	defer conn.Close()
	if _, err := conn.Do("DEL", key); err != nil {
		return nil, err
	}
	if _, err := redis.String(conn.Do("BF.RESERVEX", key, errorRate, capacity, "AGE", window.Milliseconds())); err != nil {
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

const (
	revisitWindow = 1500 * time.Millisecond // short, so the example stays fast
	revisitDue    = revisitWindow * 5 / 4   // a page is due again by window × 1.25
	margin        = 100 * time.Millisecond
)

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

	revisits(pool)

	if failed {
		os.Exit(1)
	}
	fmt.Println("ok: go bloom")
}

// revisits crawls 30 pages that must each be fetched again once their re-visit
// window has passed, and one that is fetched again midway.
func revisits(pool *redis.Pool) {
	const key = "bf-revisit"
	fetched, err := NewAgingBloomFilter(pool, key, 0.01, 100, revisitWindow)
	if err != nil {
		log.Fatalf("FAIL: go bloom: BF.RESERVEX AGE: %v", err)
	}
	var pages []string
	for i := 0; i < 30; i++ {
		pages = append(pages, fmt.Sprintf("https://example.com/news/%d", i))
	}
	changed := pages[7] // fetched again midway (its feed announced a change)

	// crawl fetches the pages not fetched within the window and checks that
	// they are exactly want. A page is checked with BF.EXISTSX and recorded
	// with BF.ADDX once fetched, not checked with BF.ADDX: adding a page that
	// is present restarts its window, so merely seeing a link would put off its
	// re-visit.
	crawl := func(label string, want ...string) {
		wanted := map[string]bool{}
		for _, u := range want {
			wanted[u] = true
		}
		n := 0
		for _, u := range pages {
			recent, err := fetched.Exists([]byte(u))
			if err != nil {
				log.Fatalf("FAIL: go bloom: BF.EXISTSX: %v", err)
			}
			check(recent != wanted[u], "%s: %s due=%v, want %v", label, u, !recent, wanted[u])
			if recent {
				continue
			}
			n++ // fetch it, then record the fetch
			isNew, err := fetched.Add([]byte(u))
			check(err == nil && isNew, "%s: BF.ADDX %s after BF.EXISTSX 0: new=%v err=%v", label, u, isNew, err)
		}
		log.Printf("%s: fetched %d of %d", label, n, len(pages))
	}
	// A page fetched at since is only sure to be skipped within the window.
	inWindow := func(since time.Time, what string) {
		late := time.Since(since)
		check(late < revisitWindow, "too slow to check %s: %v after its fetch, past the %v window (a loaded host?)",
			what, late.Round(time.Millisecond), revisitWindow)
	}
	card := func(when string) {
		conn := pool.Get()
		defer conn.Close()
		n, err := redis.Int(conn.Do("BF.CARDX", key))
		check(err == nil && n == len(pages), "BF.CARDX %s: %d (err %v), want %d", when, n, err, len(pages))
	}

	conn := pool.Get()
	window, err := redis.Ints(conn.Do("BF.INFOX", key, "WINDOW"))
	conn.Close()
	check(err == nil && len(window) == 1 && window[0] == int(revisitWindow.Milliseconds()),
		"BF.INFOX WINDOW: %v (err %v), want [%d]", window, err, revisitWindow.Milliseconds())

	first := time.Now()
	crawl("first pass", pages...)
	firstDone := time.Now()
	card("after the first pass")
	inWindow(first, "the second pass")
	crawl("second pass, at once")

	// Midway through the window one page is fetched again: BF.ADDX answers 0
	// (it was fetched lately) but its window starts over.
	time.Sleep(time.Until(firstDone.Add(revisitWindow * 6 / 10)))
	refetch := time.Now()
	inWindow(first, "the re-fetch")
	isNew, err := fetched.Add([]byte(changed))
	check(err == nil && !isNew, "%s re-fetched within its window: BF.ADDX new=%v err=%v, want 0", changed, isNew, err)
	refetched := time.Now()

	// Past window × 1.25 of the first pass every page is due again, but the
	// one fetched midway, whose own window has not passed.
	time.Sleep(time.Until(firstDone.Add(revisitDue + margin)))
	third := time.Now()
	inWindow(refetch, "the re-fetched page")
	var others []string
	for _, u := range pages {
		if u != changed {
			others = append(others, u)
		}
	}
	crawl(fmt.Sprintf("third pass, %v on", third.Sub(firstDone).Round(time.Millisecond)), others...)

	// And past window × 1.25 of its re-fetch, that page alone is due.
	time.Sleep(time.Until(refetched.Add(revisitDue + margin)))
	fourth := time.Now()
	inWindow(third, "the fourth pass")
	crawl(fmt.Sprintf("fourth pass, %v on", fourth.Sub(firstDone).Round(time.Millisecond)), changed)
	card("after the fourth pass")

	conn = pool.Get()
	conn.Do("DEL", key)
	conn.Close()
}
