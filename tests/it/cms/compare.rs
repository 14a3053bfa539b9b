//! Side by side with RedisBloom 2.8 (`CMS.*`, loaded in the same server):
//! on one Zipf stream, at the same width and depth, warden's mean
//! over-estimate is at most RedisBloom's, and its MEMORY USAGE too.

use std::collections::HashMap;

use crate::common::payload::Rng;
use crate::common::peer_modules::redisbloom;
use crate::common::*;

/// A Zipf stream: `draws` ranks in 0..n, rank r drawn with weight 1 / (r + 1)^s.
pub fn zipf(seed: u64, n: usize, s: f64, draws: usize) -> Vec<usize> {
    let mut rng = Rng(seed);
    let mut cumulative = Vec::with_capacity(n);
    let mut acc = 0.0;
    for r in 1..=n {
        acc += 1.0 / (r as f64).powf(s);
        cumulative.push(acc);
    }
    (0..draws)
        .map(|_| {
            let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * acc;
            cumulative.partition_point(|c| *c < u).min(n - 1)
        })
        .collect()
}

/// Adds `stream` (items `key:<rank>`) to both sketches, 100 a call.
fn feed(con: &mut Connection, stream: &[usize], (rb, own): (&str, &str)) {
    for chunk in stream.chunks(100) {
        let mut p = redis::pipe();
        for (name, key) in [("CMS.INCRBY", rb), ("CMS.INCRBYX", own)] {
            let c = p.cmd(name).arg(key);
            for r in chunk {
                c.arg(format!("key:{r}")).arg(1);
            }
        }
        let _: Vec<Value> = p.query(con).unwrap();
    }
}

/// The mean over-estimate of `key`'s counts (queried with `query`) over the
/// items of `truth`.
fn mean_over(con: &mut Connection, query: &str, key: &str, truth: &HashMap<usize, i64>) -> f64 {
    let items: Vec<(&usize, &i64)> = truth.iter().collect();
    let mut over = 0i64;
    for chunk in items.chunks(500) {
        let mut c = cmd(query);
        c.arg(key);
        for (r, _) in chunk {
            c.arg(format!("key:{r}"));
        }
        let got: Vec<i64> = query_cmd(&mut c, con);
        for ((_, want), got) in chunk.iter().zip(got) {
            assert!(got >= **want, "{query} under-counts");
            over += got - **want;
        }
    }
    over as f64 / truth.len() as f64
}

#[test]
fn over_estimates_and_memory_are_at_most_redisbloom_s() {
    let server = Server::start_with(&["--loadmodule", redisbloom().as_str()], &[]);
    let mut con = server.conn();
    for (width, depth, s) in [(100, 4, 1.0), (500, 5, 1.1), (2000, 7, 0.9), (272, 3, 1.2)] {
        let (rb, own) = (format!("rb:{width}:{depth}"), format!("wd:{width}:{depth}"));
        ok(&mut con, &cmd_of!("CMS.INITBYDIM", &rb, width, depth));
        ok(&mut con, &cmd_of!("CMS.INITBYDIMX", &own, width, depth));
        let stream = zipf(width as u64 * 31 + depth, 20_000, s, 200_000);
        feed(&mut con, &stream, (&rb, &own));
        let mut truth: HashMap<usize, i64> = HashMap::new();
        for r in &stream {
            *truth.entry(*r).or_default() += 1;
        }
        let theirs = mean_over(&mut con, "CMS.QUERY", &rb, &truth);
        let ours = mean_over(&mut con, "CMS.QUERYX", &own, &truth);
        let mem = |con: &mut Connection, k: &str| -> i64 { query!(con, "MEMORY", "USAGE", k) };
        let (m_rb, m_own) = (mem(&mut con, &rb), mem(&mut con, &own));
        println!(
            "{width} x {depth}, Zipf {s}: mean over-estimate warden {ours:.2}, RedisBloom {theirs:.2}; MEMORY USAGE warden {m_own}, RedisBloom {m_rb}"
        );
        assert!(ours <= theirs, "{width} x {depth}: {ours} > {theirs}");
        assert!(m_own <= m_rb, "{width} x {depth}: {m_own} > {m_rb}");
    }
}
