//! A non-scaling filter takes any error rate in (0, 1) and sizes it like a
//! scaling layer (about −ln p / ln²2 bits per item), as RedisBloom does.

use crate::common::*;

fn size(con: &mut Connection, key: &str) -> i64 {
    cmd("MEMORY").arg("USAGE").arg(key).query(con).unwrap()
}

#[test]
fn tiny_error_rates_fit_in_small_filters() {
    let (_s, mut con) = Server::start_conn();
    for (rate, max_bytes) in [("1.1e-20", 2_000), ("1e-100", 8_000), ("1e-300", 20_000)] {
        let key = format!("b{rate}");
        let ok: String = cmd("BF.RESERVEX")
            .arg(&key)
            .arg(rate)
            .arg(100)
            .arg("NONSCALING")
            .query(&mut con)
            .unwrap_or_else(|e| panic!("{rate}: {e}"));
        assert_eq!(ok, "OK");
        let bytes = size(&mut con, &key);
        assert!(bytes <= max_bytes, "{rate}: {bytes} bytes");
        for i in 0..100 {
            let added: i64 = query!(&mut con, "BF.ADDX", &key, i);
            assert_eq!(added, 1, "{rate}: item {i}");
        }
        let present: Vec<i64> = query!(&mut con, "BF.MEXISTSX", &key, (0..100).collect::<Vec<_>>());
        assert!(present.iter().all(|p| *p == 1), "{rate}");
        let absent: Vec<i64> = query!(
            &mut con,
            "BF.MEXISTSX",
            &key,
            (1000..2000).collect::<Vec<_>>()
        );
        assert!(
            absent.iter().all(|p| *p == 0),
            "{rate}: a false positive at this rate"
        );
    }
    // It survives a reload (hash counts above 64 are valid stored data).
    let before = db_digest(&mut con);
    let _: () = query!(&mut con, "DEBUG", "RELOAD");
    assert_eq!(db_digest(&mut con), before);
}
