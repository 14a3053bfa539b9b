// Who is hammering the API: the ten API keys most often refused by RL.TOKEN in
// the last five minutes (redigo).
//
// Every request asks the limiter (RL.TOKEN api:<key> rate burst); when it answers
// "denied" (its first integer is 0), the next call counts the key in a top-k over a
// five-minute window (TOPK.ADDX refused <key>, made by TOPK.RESERVEX refused 10 100 5
// 0.9 WINDOW 5m). TOPK.LISTX refused WITHCOUNT answers at any time: the ten keys
// refused most in (at least) the last five minutes, most refused first. Nothing runs
// per key on the server; refusals older than the window age out as the sketch moves on.
//
// Server: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
// Build offline: GO111MODULE=off GOPATH=/usr/share/gocode go run main.go
// Prints "ok: go refused" and exits 0 on success; exits 1 on a failed check.
package main

import (
	"fmt"
	"log"
	"os"
	"sort"

	"github.com/gomodule/redigo/redis"
)

const (
	keys  = 30 // API keys key:00 .. key:29
	rate  = 1  // per key: 1 request a second,
	burst = 10 // in bursts of 10
)

func fail(format string, args ...interface{}) {
	log.Printf("FAIL: go refused: "+format, args...)
	os.Exit(1)
}

// request is one API request of key: it asks the limiter and, when the limiter
// refuses, counts the refusal in the top-k. It reports whether it was allowed.
func request(conn redis.Conn, key string) bool {
	r, err := redis.Int64s(conn.Do("RL.TOKEN", "api:"+key, rate, burst))
	if err != nil || len(r) != 4 {
		fail("RL.TOKEN: %v %v", r, err)
	}
	if r[0] == 1 {
		return true
	}
	if _, err := conn.Do("TOPK.ADDX", "refused", key); err != nil {
		fail("TOPK.ADDX: %v", err)
	}
	return false
}

func main() {
	log.SetFlags(0)
	host, port := os.Getenv("WARDEN_HOST"), os.Getenv("WARDEN_PORT")
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "6379"
	}
	conn, err := redis.Dial("tcp", host+":"+port)
	if err != nil {
		fail("connect: %v", err)
	}
	defer conn.Close()

	names := make([]string, keys)
	sent := map[string]int{}
	refused := map[string]int{}
	for i := range names {
		names[i] = fmt.Sprintf("key:%02d", i)
		sent[names[i]] = 3 * (keys - i) // key:00 sends the most, key:29 the fewest
		if _, err := conn.Do("DEL", "api:"+names[i]); err != nil {
			fail("DEL: %v", err)
		}
	}
	if _, err := conn.Do("DEL", "refused"); err != nil {
		fail("DEL: %v", err)
	}
	if _, err := conn.Do("TOPK.RESERVEX", "refused", 10, 100, 5, "0.9", "WINDOW", "5m"); err != nil {
		fail("TOPK.RESERVEX: %v", err)
	}
	for round := 0; round < sent[names[0]]; round++ {
		for _, k := range names {
			if round < sent[k] && !request(conn, k) {
				refused[k]++
			}
		}
	}

	top, err := redis.Values(conn.Do("TOPK.LISTX", "refused", "WITHCOUNT"))
	if err != nil {
		fail("TOPK.LISTX: %v", err)
	}
	fmt.Println("most refused in the last five minutes:")
	var listed []string
	for i := 0; i+1 < len(top); i += 2 {
		key, _ := redis.String(top[i], nil)
		count, _ := redis.Int(top[i+1], nil)
		fmt.Printf("  %s: %d refusals\n", key, count)
		if count != refused[key] {
			fail("%s: listed with %d refusals, the limiter refused it %d times", key, count, refused[key])
		}
		listed = append(listed, key)
	}

	// The ten heaviest senders are the ten most refused, in order.
	want := append([]string(nil), names...)
	sort.SliceStable(want, func(a, b int) bool { return refused[want[a]] > refused[want[b]] })
	if fmt.Sprint(listed) != fmt.Sprint(want[:10]) {
		fail("TOPK.LISTX gave %v, want %v", listed, want[:10])
	}
	in, err := redis.Ints(conn.Do("TOPK.QUERYX", "refused", "key:00", "key:29"))
	if err != nil || fmt.Sprint(in) != "[1 0]" {
		fail("TOPK.QUERYX key:00 key:29: %v %v", in, err)
	}
	fmt.Println("ok: go refused")
}
