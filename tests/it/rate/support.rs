//! `RL.*` helpers shared by the rate limiter test files: calls that must succeed or
//! fail, pipelined calls, and a tolerance check.

use crate::common::*;

pub const MISSING_DIGEST: &str = "0000000000000000000000000000000000000000";

pub fn try_rl(con: &mut Connection, args: &[&str]) -> redis::RedisResult<Vec<i64>> {
    command(args).query(con)
}

/// Runs an `RL.*` command that must succeed and returns its integer array.
pub fn rl(con: &mut Connection, args: &[&str]) -> Vec<i64> {
    try_rl(con, args).unwrap_or_else(|e| panic!("{args:?} failed: {}", err_text(&e)))
}

/// Runs a command that must fail and returns its error text.
pub fn rl_err(con: &mut Connection, args: &[&str]) -> String {
    match command(args).query::<Value>(con) {
        Ok(v) => panic!("{args:?} should have failed, replied {v:?}"),
        Err(e) => err_text(&e),
    }
}

/// Pipelines the commands in one round trip and returns their replies.
pub fn rl_pipe(con: &mut Connection, calls: &[&[&str]]) -> Vec<Vec<i64>> {
    let mut p = redis::pipe();
    for args in calls {
        p.add_command(command(args));
    }
    p.query(con)
        .unwrap_or_else(|e| panic!("pipeline {calls:?} failed: {}", err_text(&e)))
}

pub fn assert_near(got: i64, want: i64, tol: i64, what: &str) {
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got}, want {want} ± {tol}"
    );
}
