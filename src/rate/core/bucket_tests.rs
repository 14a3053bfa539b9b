//! Unit tests of `bucket` (its `tests` module), kept apart so the code reads on its own.

use super::*;
use crate::rate::core::errors;

/// A one-limit token bucket call, as RL.TOKEN with one rate and burst.
fn token_bucket(
    state: Option<&BucketState>,
    rate: Rate,
    burst: u64,
    cost: u64,
    max_wait: u64,
    now: i64,
) -> Result<Outcome<BucketState, Decision>, WardenError> {
    let mut out = [BucketState::default()];
    let stored = state.map(std::slice::from_ref).unwrap_or_default();
    let limit = BucketLimit { rate, size: burst };
    let d = token_buckets(stored, &[limit], cost, max_wait, now, &mut out)?;
    Ok(Outcome {
        reply: d.reply,
        store: d.store.map(|expires| (out[0], expires)),
    })
}

struct Bucket {
    state: Option<BucketState>,
    expires: Option<i64>,
}

impl Bucket {
    fn new() -> Bucket {
        Bucket {
            state: None,
            expires: None,
        }
    }

    fn apply<R>(&mut self, out: Outcome<BucketState, R>) -> R {
        if let Some((s, e)) = out.store {
            self.state = Some(s);
            self.expires = e;
        }
        out.reply
    }

    fn token(&mut self, rate: &str, burst: u64, cost: u64, max_wait: u64, now: i64) -> Decision {
        let rate = Rate::parse(rate.as_bytes()).expect("rate");
        let out = token_bucket(self.state.as_ref(), rate, burst, cost, max_wait, now).expect("ok");
        self.apply(out)
    }
}

#[test]
fn seed_scenario_waits_grow_by_one_second() {
    // qps 1, burst 2, five calls at once with a large MAXWAIT: 0, 0, 1000, 2000, 3000.
    let mut b = Bucket::new();
    let waits: Vec<i64> = (0..5)
        .map(|_| b.token("1", 2, 1, 1_000_000, 5_000).wait_ms)
        .collect();
    assert_eq!(waits, vec![0, 0, 1000, 2000, 3000]);
    assert!(b.token("1", 2, 1, 1_000_000, 5_000).allowed);
}

#[test]
fn partial_refill_is_never_lost() {
    // 15 calls one second apart against 2 tokens per 3 s: 11 pass, not 8.
    let mut b = Bucket::new();
    let passed = (0..15)
        .filter(|i| b.token("2/3s", 2, 1, 0, 10_000 + i * 1000).allowed)
        .count();
    assert_eq!(passed, 11);
}

#[test]
fn burst_then_refill_exactly_on_time() {
    let mut b = Bucket::new();
    for _ in 0..3 {
        assert!(b.token("3", 3, 1, 0, 0).allowed);
    }
    let denied = b.token("3", 3, 1, 0, 0);
    assert_eq!(
        (denied.allowed, denied.remaining, denied.wait_ms),
        (false, 0, 334)
    );
    assert!(!b.token("3", 3, 3, 0, 999).allowed);
    let full = b.token("3", 3, 3, 0, 1000);
    assert!(full.allowed, "3 tokens are back after exactly one second");
    assert_eq!(full.reset_ms, 1000);
}

#[test]
fn cost_above_burst_can_never_pass_and_writes_nothing() {
    let rate = Rate::parse(b"10").expect("rate");
    let out = token_bucket(None, rate, 5, 6, 1_000_000, 0).expect("ok");
    assert_eq!(out.reply.wait_ms, -1);
    assert!(!out.reply.allowed);
    assert_eq!(out.store, None);
}

#[test]
fn denied_and_peek_calls_write_nothing() {
    let mut b = Bucket::new();
    b.token("1", 1, 1, 0, 0);
    let before = b.state;
    let rate = Rate::parse(b"1").expect("rate");
    let denied = token_bucket(b.state.as_ref(), rate, 1, 1, 0, 10).expect("ok");
    assert!(!denied.reply.allowed && denied.store.is_none());
    let peek = token_bucket(b.state.as_ref(), rate, 1, 0, 0, 10).expect("ok");
    assert!(peek.store.is_none());
    assert_eq!(peek.reply.remaining, 0);
    assert_eq!(b.state, before);
    let fresh_peek = token_bucket(None, rate, 4, 0, 0, 10).expect("ok");
    assert_eq!(
        (fresh_peek.reply.allowed, fresh_peek.reply.remaining),
        (true, 4)
    );
    assert!(fresh_peek.store.is_none(), "COST 0 creates no key");
}

#[test]
fn inf_allows_everything_even_with_burst_zero() {
    let out = token_bucket(None, Rate::Inf, 0, 1_000, 0, 0).expect("ok");
    assert!(out.reply.allowed && out.store.is_none());
}

#[test]
fn burst_zero_denies_all_but_inf() {
    let rate = Rate::parse(b"1000").expect("rate");
    let out = token_bucket(None, rate, 0, 1, 1_000_000, 0).expect("ok");
    assert!(!out.reply.allowed);
    assert_eq!(out.reply.wait_ms, -1);
}

#[test]
fn rate_zero_never_refills_and_never_expires() {
    let mut b = Bucket::new();
    assert!(b.token("0", 2, 1, 0, 0).allowed);
    assert!(b.token("0", 2, 1, 0, 1).allowed);
    let d = b.token("0", 2, 1, 1_000_000, 1_000_000);
    assert!(!d.allowed);
    assert_eq!((d.wait_ms, d.reset_ms), (-1, -1));
    assert_eq!(b.expires, None);
}

#[test]
fn state_expires_when_the_bucket_is_full_again() {
    let mut b = Bucket::new();
    let d = b.token("10", 5, 3, 0, 1_000);
    assert_eq!(d.reset_ms, 300);
    assert_eq!(b.expires, Some(1_300));
    // Debt extends the expiry to cover it.
    let d = b.token("10", 5, 5, 10_000, 1_000);
    assert_eq!(d.wait_ms, 300);
    assert_eq!(b.expires, Some(1_800));
}

#[test]
fn clock_stepping_back_mints_nothing() {
    let mut b = Bucket::new();
    assert!(b.token("1", 1, 1, 0, 10_000).allowed);
    // The clock steps back 5 s, then forward past the original time.
    assert!(!b.token("1", 1, 1, 0, 5_000).allowed);
    assert!(!b.token("1", 1, 1, 0, 10_500).allowed);
    assert!(b.token("1", 1, 1, 0, 11_000).allowed);
    assert!(b.state.map_or(0, |s| s.last_ms) >= 11_000);
}

#[test]
fn overflowing_cost_is_an_error() {
    let rate = Rate::parse(b"1/d").expect("rate");
    let err = token_bucket(None, rate, u64::MAX, u64::MAX, 0, 0);
    assert_eq!(err, Err(errors::OVERFLOW));
}

#[test]
fn leaky_bucket_meters_and_drains() {
    let rate = Rate::parse(b"2").expect("rate");
    let mut state = None;
    let mut call = |cost, now| {
        let out = leaky_bucket(state.as_ref(), rate, 4, cost, now).expect("ok");
        if let Some((s, _)) = out.store {
            state = Some(s);
        }
        out.reply
    };
    assert!(call(4, 0).allowed);
    let d = call(1, 0);
    assert_eq!((d.allowed, d.wait_ms, d.reset_ms), (false, 500, 2000));
    assert!(call(1, 500).allowed);
    assert_eq!(call(5, 500).wait_ms, -1);
}

/// A key holding several limits, called with a manual clock.
struct Keyed {
    states: Vec<BucketState>,
    expires: Option<i64>,
    writes: usize,
}

impl Keyed {
    fn new() -> Keyed {
        Keyed {
            states: Vec::new(),
            expires: None,
            writes: 0,
        }
    }

    /// `limits` as (rate, burst) pairs.
    fn call(&mut self, limits: &[(&str, u64)], cost: u64, max_wait: u64, now: i64) -> Decision {
        let limits: Vec<BucketLimit> = limits
            .iter()
            .map(|(r, b)| BucketLimit {
                rate: Rate::parse(r.as_bytes()).expect("rate"),
                size: *b,
            })
            .collect();
        let mut out = [BucketState::default(); crate::rate::core::rate::MAX_LIMITS];
        let d = token_buckets(&self.states, &limits, cost, max_wait, now, &mut out).expect("ok");
        if let Some(expires) = d.store {
            self.states = out[..limits.len()].to_vec();
            self.expires = expires;
            self.writes += 1;
        }
        d.reply
    }

    fn leaky(&mut self, rate: &str, capacity: u64, cost: u64, now: i64) -> Decision {
        let rate = Rate::parse(rate.as_bytes()).expect("rate");
        let out = leaky_bucket(self.states.first(), rate, capacity, cost, now).expect("ok");
        if let Some((s, expires)) = out.store {
            self.states = vec![s];
            self.expires = expires;
            self.writes += 1;
        }
        out.reply
    }
}

fn remaining(d: Decision) -> i64 {
    d.remaining
}

#[test]
fn a_lower_then_higher_burst_keeps_the_tokens_that_were_used() {
    // The example: x/time/rate gives 9, 2, 1, 0 (not 9, 1, 0, 96).
    let mut k = Keyed::new();
    let got: Vec<i64> = [10, 3, 3, 100]
        .iter()
        .enumerate()
        .map(|(i, b)| remaining(k.call(&[("1/m", *b)], 1, 0, 1_000 + i as i64)))
        .collect();
    assert_eq!(got, vec![9, 2, 1, 0]);
    // Raising the burst hands out nothing: the next token is a minute away.
    let d = k.call(&[("1/m", 100)], 1, 0, 1_010);
    assert!(!d.allowed);
    // 2 ticks (ms of refill) were left at 1 003 ms, 7 more accrued since.
    assert_eq!(d.wait_ms, 60_000 - 9);
}

#[test]
fn a_new_rate_applies_from_now_and_keeps_what_accrued() {
    let mut k = Keyed::new();
    assert!(k.call(&[("1/s", 5)], 5, 0, 0).allowed);
    // 500 ms at 1/s accrued half a token; from now 10/s.
    let d = k.call(&[("10/s", 5)], 1, 0, 500);
    assert_eq!((d.allowed, d.wait_ms), (false, 50), "{d:?}");
    assert_eq!(k.writes, 2, "the denied call stored the new rate");
    let d = k.call(&[("10/s", 5)], 1, 0, 550);
    assert!(d.allowed, "0.5 + 50 ms × 10/s = 1 token: {d:?}");
    // Back to a slow rate: the 0 tokens left refill at 1/s from now.
    let d = k.call(&[("1/s", 5)], 1, 0, 600);
    assert_eq!((d.allowed, d.wait_ms), (false, 500), "{d:?}");
}

#[test]
fn a_lower_burst_caps_debt_and_tokens_alike() {
    let mut k = Keyed::new();
    // 1/s burst 4, spend 4 and reserve 2 more: 2 tokens of debt.
    assert!(k.call(&[("1/s", 4)], 4, 0, 0).allowed);
    let d = k.call(&[("1/s", 4)], 2, 10_000, 0);
    assert_eq!((d.allowed, d.wait_ms), (true, 2_000));
    // Burst 1: the debt stays (it is no token), 3 s to one token.
    let d = k.call(&[("1/s", 1)], 1, 0, 0);
    assert_eq!((d.allowed, d.wait_ms, d.reset_ms), (false, 3_000, 3_000));
    // 10 s later the bucket holds its new burst, 1 token, not 4.
    let d = k.call(&[("1/s", 4)], 2, 0, 10_000);
    assert_eq!((d.allowed, d.remaining), (false, 1), "{d:?}");
}

#[test]
fn a_version_1_state_reads_its_deficit_against_the_calls_burst() {
    let rate = Rate::parse(b"1/s").expect("rate");
    let Rate::Finite {
        ticks_per_token,
        ticks_per_ms,
    } = rate
    else {
        panic!()
    };
    let old = BucketState {
        last_ms: 0,
        deficit: 3 * u128::from(ticks_per_token),
        ticks_per_token,
        ticks_per_ms,
        burst: crate::rate::core::rate::UNKNOWN_BURST,
    };
    for (burst, left) in [(10, 7), (5, 2), (3, 0)] {
        let out = token_bucket(Some(&old), rate, burst, 0, 0, 0).expect("ok");
        assert_eq!(out.reply.remaining, left, "burst {burst}");
    }
    let out = token_bucket(Some(&old), rate, 10, 1, 0, 0).expect("ok");
    let (s, _) = out.store.expect("stored");
    assert_eq!((s.burst, s.deficit), (10, 4 * u128::from(ticks_per_token)));
}

#[test]
fn several_limits_pass_together_and_reply_with_the_tightest() {
    let mut k = Keyed::new();
    let limits = [("10/s", 10), ("5/m", 3)];
    for left in [2, 1, 0] {
        let d = k.call(&limits, 1, 0, 0);
        assert_eq!((d.allowed, d.remaining), (true, left), "{d:?}");
    }
    // The per-minute limit is out: 12 s to its next token, though the
    // per-second one has room.
    let d = k.call(&limits, 1, 0, 100);
    assert_eq!((d.allowed, d.remaining, d.wait_ms), (false, 0, 11_900));
    assert_eq!(d.reset_ms, 35_900, "reset is the largest");
    // A denied call counts against none.
    let d = k.call(&[("10/s", 10)], 0, 0, 100);
    assert_eq!(d.remaining, 8, "the per-second limit alone: {d:?}");
    // With MAXWAIT the call is reserved on both, the wait is the largest.
    let mut k = Keyed::new();
    k.call(&limits, 3, 0, 0);
    let d = k.call(&limits, 1, 60_000, 0);
    assert_eq!((d.allowed, d.wait_ms), (true, 12_000), "{d:?}");
    assert_eq!(k.expires, Some(48_000), "full when the slowest is");
}

#[test]
fn a_limit_added_starts_full_and_a_removed_one_is_dropped() {
    let mut k = Keyed::new();
    k.call(&[("1/h", 5)], 4, 0, 0);
    let d = k.call(&[("1/h", 5), ("1/m", 10)], 1, 0, 0);
    assert_eq!((d.allowed, d.remaining), (true, 0), "{d:?}");
    assert_eq!(k.states.len(), 2);
    assert_eq!(k.states[1].deficit, 60_000, "one token of the new limit");
    // Dropping the first limit: the second alone decides.
    let d = k.call(&[("1/h", 5)], 0, 0, 0);
    assert_eq!(d.remaining, 0, "position 0 is still the per-hour limit");
    let d = k.call(&[("1/h", 5)], 1, 0, 0);
    assert!(!d.allowed);
    assert_eq!(
        k.states.len(),
        1,
        "dropping a limit is a change even a denied call stores"
    );
    let writes = k.writes;
    assert!(!k.call(&[("1/h", 5)], 1, 0, 0).allowed);
    assert_eq!(
        k.writes, writes,
        "a denied call with the same limits writes nothing"
    );
}

#[test]
fn inf_and_zero_rates_follow_x_time_rate() {
    // inf: everything passes, burst 0 or cost above it; no state kept.
    let mut k = Keyed::new();
    let d = k.call(&[("inf", 0)], 1_000, 0, 0);
    assert!(d.allowed && k.writes == 0);
    // A spent bucket switched to inf is full again as soon as time passes.
    let mut k = Keyed::new();
    k.call(&[("1/h", 2)], 2, 0, 0);
    assert!(k.call(&[("inf", 2)], 5, 0, 10).allowed);
    assert_eq!(k.expires, Some(11), "an inf limit is idle at once");
    assert_eq!(k.call(&[("1/h", 2)], 0, 0, 10).remaining, 0, "same ms");
    assert_eq!(k.call(&[("1/h", 2)], 0, 0, 11).remaining, 2, "a ms later");
    // Rate 0: burst events in all, then nothing, ever.
    let mut k = Keyed::new();
    for left in [2, 1, 0] {
        assert_eq!(k.call(&[("0", 3)], 1, 0, 0).remaining, left);
    }
    let d = k.call(&[("0", 3)], 1, 1_000_000, 1_000_000);
    assert_eq!((d.allowed, d.wait_ms, d.reset_ms), (false, -1, -1));
    assert_eq!(k.expires, None);
}

#[test]
fn leaky_keeps_its_level_when_rate_or_capacity_change() {
    let mut k = Keyed::new();
    assert!(k.leaky("1/s", 10, 8, 0).allowed);
    // Capacity 5: the level 8 stays (nothing forgiven): 4 s to room for 1.
    let d = k.leaky("1/s", 5, 1, 0);
    assert_eq!((d.allowed, d.remaining, d.wait_ms), (false, 0, 4_000));
    // A faster drain from now: 1 s at 1/s drained 1 (level 7), then 4/s:
    // 3 more to drain for room for 1.
    let d = k.leaky("4/s", 5, 1, 1_000);
    assert_eq!((d.allowed, d.wait_ms), (false, 750), "{d:?}");
    assert_eq!(k.writes, 2, "the new rate was stored by the denied call");
    let d = k.leaky("4/s", 5, 1, 1_750);
    assert!(d.allowed, "{d:?}");
    // A larger capacity is room at once.
    let d = k.leaky("4/s", 20, 10, 1_750);
    assert_eq!((d.allowed, d.remaining), (true, 5), "{d:?}");
}

#[test]
fn parameter_changes_never_mint_tokens() {
    // Random rates, bursts and times: after any change, remaining never
    // exceeds what the old parameters held (capped at the new burst).
    let rates = ["1/s", "3/s", "2/3s", "7/m", "100/s", "0", "inf", "0.5"];
    let mut seed: u64 = 7;
    let mut rand = move |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    for _ in 0..200 {
        let mut k = Keyed::new();
        let mut now = 0;
        // The parameters the stored state was written with.
        let mut written = ("1/s", 5);
        k.call(&[written], 1, 0, now);
        for _ in 0..30 {
            now += rand(2_000) as i64;
            let before = k.call(&[written], 0, 0, now).remaining;
            let (r2, b2) = (rates[rand(8) as usize], rand(8));
            let after = k.call(&[(r2, b2)], 0, 0, now).remaining;
            if r2 != "inf" {
                assert!(after <= before.min(b2 as i64), "{written:?} -> {r2} {b2}");
            }
            let writes = k.writes;
            k.call(&[(r2, b2)], rand(3), rand(2) * 5_000, now);
            if k.writes > writes {
                written = (r2, b2);
            }
        }
    }
}

/// One recorded call: (t_ms, rate, burst, cost, maxwait) and x/time/rate's
/// (ok, wait_ms when ok, remaining when not at rate inf).
type Recorded<'a> = (
    (i64, &'a str, u64, u64, u64),
    (bool, Option<i64>, Option<i64>),
);

/// The scenarios of tests/fixtures/x_time_rate/sequences.txt (recorded
/// by record.go there): name, whether warden deviates, the calls.
fn recorded() -> Vec<(&'static str, bool, Vec<Recorded<'static>>)> {
    let text = include_str!("../../../tests/fixtures/x_time_rate/sequences.txt");
    let mut out: Vec<(&str, bool, Vec<Recorded>)> = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words[0] == "scenario" {
            out.push((words[1], words.get(2) == Some(&"deviates"), Vec::new()));
            continue;
        }
        let int = |i: usize| words[i].parse::<i64>().expect(line);
        let call = (
            int(0),
            words[1],
            int(2) as u64,
            int(3) as u64,
            int(4) as u64,
        );
        let got = (
            words[6] == "1",
            words[7].parse().ok(),
            words[8].parse().ok(),
        );
        out.last_mut().expect("a scenario").2.push((call, got));
    }
    out
}

/// Replays a recorded scenario: warden's (ok, wait_ms, remaining) per call.
fn replay(calls: &[Recorded]) -> Vec<(bool, i64, i64)> {
    let mut k = Keyed::new();
    calls
        .iter()
        .map(|((t, rate, burst, cost, max_wait), _)| {
            let d = k.call(&[(rate, *burst)], *cost, *max_wait, 1_800_000_000_000 + t);
            (d.allowed, d.wait_ms, d.remaining)
        })
        .collect()
}

#[test]
fn matches_recorded_x_time_rate_sequences() {
    let scenarios = recorded();
    assert!(scenarios.len() >= 50, "{} scenarios", scenarios.len());
    let mut compared = 0;
    for (name, deviates, calls) in scenarios.iter().filter(|s| !s.1) {
        assert!(!deviates);
        for (i, (((t, rate, burst, cost, wait), (ok, go_wait, go_left)), ours)) in
            calls.iter().zip(replay(calls)).enumerate()
        {
            let at = format!("{name} call {i}: t {t} {rate} {burst} COST {cost} MAXWAIT {wait}");
            assert_eq!(ours.0, *ok, "{at}: allowed; warden {ours:?}");
            if let (true, Some(w)) = (ok, go_wait) {
                assert_eq!(ours.1, *w, "{at}: wait_ms");
            }
            if let Some(left) = go_left {
                assert_eq!(ours.2, *left, "{at}: remaining");
            }
            compared += 1;
        }
    }
    assert!(compared > 1_500, "{compared} calls compared");
}

#[test]
fn deviates_from_x_time_rate_at_rate_zero_only_to_keep_what_was_used() {
    // x/time/rate counts events against the burst at rate 0, not the
    // tokens: switched to rate 0 a limiter allows its burst again, a
    // limiter made at rate 0 has no tokens once its rate is raised, and a
    // new burst at rate 0 is a new allowance. warden keeps the tokens.
    let want: [(&str, &[(bool, i64)]); 3] = [
        (
            "to_rate_zero",
            &[(true, 1), (true, 0), (false, 0), (false, 0)],
        ),
        ("from_rate_zero", &[(true, 2), (true, 1), (true, 0)]),
        ("rate_zero_new_burst", &[(true, 0), (false, 0), (false, 0)]),
    ];
    let scenarios = recorded();
    for (name, expected) in want {
        let (_, deviates, calls) = scenarios.iter().find(|s| s.0 == name).expect("recorded");
        assert!(deviates, "{name}");
        let ours: Vec<(bool, i64)> = replay(calls).iter().map(|c| (c.0, c.2)).collect();
        assert_eq!(ours, expected, "{name}");
        let go: Vec<(bool, i64)> = calls
            .iter()
            .map(|(_, (ok, _, left))| (*ok, left.unwrap_or(-1)))
            .collect();
        assert_ne!(ours, go, "{name}: x/time/rate no longer differs");
    }
}

#[test]
fn too_many_limits_is_an_error() {
    let limits = [BucketLimit::NONE; 9];
    let mut out = [BucketState::default(); crate::rate::core::rate::MAX_LIMITS];
    let err = token_buckets(&[], &limits, 1, 0, 0, &mut out);
    assert_eq!(err, Err(errors::too_many_limits()));
    let text = errors::too_many_limits().to_string();
    assert!(
        text.contains(&crate::rate::core::rate::MAX_LIMITS.to_string()),
        "{text}"
    );
}

#[test]
fn agrees_with_a_reference_model_of_reserve_n() {
    struct Model {
        tokens: f64,
        last: f64,
    }
    let mut seed: u64 = 42;
    let mut rand = move |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    for case in 0..300 {
        let per_s = 1 + rand(20);
        let burst = rand(6);
        let max_wait = [0, 100, 1000, 100_000][rand(4) as usize];
        let mut model = Model {
            tokens: burst as f64,
            last: 0.0,
        };
        let mut b = Bucket::new();
        let mut now = 1_000_000i64;
        for _ in 0..200 {
            now += rand(400) as i64;
            let cost = rand(4);
            // ReserveN(now, cost) with maxFutureReserve = max_wait.
            let t = now as f64 / 1000.0;
            let elapsed = (t - model.last).max(0.0);
            let tokens = (model.tokens + elapsed * per_s as f64).min(burst as f64);
            let left = tokens - cost as f64;
            let wait = if left < 0.0 {
                -left / per_s as f64
            } else {
                0.0
            };
            let ok = cost <= burst && wait * 1000.0 <= max_wait as f64 + 1e-6;
            let got = b.token(&per_s.to_string(), burst, cost, max_wait, now);
            assert_eq!(got.allowed, ok, "case {case} now {now} cost {cost}");
            if ok && cost > 0 {
                model.tokens = left;
                model.last = t;
                assert_eq!(got.wait_ms, (wait * 1000.0 - 1e-6).ceil().max(0.0) as i64);
            }
        }
    }
}
