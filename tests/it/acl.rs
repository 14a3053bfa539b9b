//! ACL: the README's recipe keeps an application user off the internal
//! commands on every server; where the server has module ACL categories
//! (Valkey 8+, Redis 7.2+) each family has its own.

use crate::common::*;

/// Whether this server registers module ACL categories (`RedisModule_AddACLCategory`).
fn has_module_categories(con: &mut Connection) -> bool {
    let valkey = info_field(con, "server", "server_name").is_some_and(|n| n == "valkey");
    let version = info_field(con, "server", "redis_version").unwrap_or_default();
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    valkey || (major, minor) >= (7, 4)
}

fn categories(con: &mut Connection) -> Vec<String> {
    cmd("ACL").arg("CAT").query(con).expect("ACL CAT")
}

fn commands_in(con: &mut Connection, category: &str) -> Vec<String> {
    cmd("ACL")
        .arg("CAT")
        .arg(category)
        .query(con)
        .expect("ACL CAT category")
}

/// The recipe from the README (read from it): it names every internal command
/// the module registers; the user can lock and add, and is refused each
/// internal command (NOPERM) before it even runs.
#[test]
fn the_readme_recipe_keeps_clients_off_internal_commands() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let recipe: Vec<&str> = readme
        .lines()
        .find(|l| l.starts_with("ACL SETUSER app "))
        .expect("the README's ACL recipe")
        .split_whitespace()
        .skip(1)
        .collect();
    let server = Server::start();
    let mut admin = server.conn();
    let internal: Vec<String> = cmd("COMMAND")
        .arg("LIST")
        .arg("FILTERBY")
        .arg("MODULE")
        .arg("warden")
        .query::<Vec<String>>(&mut admin)
        .expect("COMMAND LIST")
        .into_iter()
        .filter(|c| c.contains("._"))
        .collect();
    assert!(internal.len() >= 6, "internal commands: {internal:?}");
    for name in &internal {
        assert!(
            recipe.contains(&format!("-{name}").as_str()),
            "the README's recipe does not name {name}: {recipe:?}"
        );
    }
    let _: () = query!(&mut admin, "ACL", &recipe);
    let mut app = server.conn();
    let _: () = query!(&mut app, "AUTH", "app", "secret");
    let t: Option<i64> = query!(&mut app, "DLOCK.ACQUIRE", "k", "me", 1000);
    assert!(t.is_some());
    let added: i64 = query!(&mut app, "BF.ADDX", "f", "x");
    assert_eq!(added, 1);
    for name in &internal {
        // As many arguments as its arity asks (Redis checks arity before ACL).
        let info: Value = query!(&mut admin, "COMMAND", "INFO", name);
        let arity = match &info {
            Value::Array(rows) => match rows.first() {
                Some(Value::Array(row)) => match row.get(1) {
                    Some(Value::Int(n)) => n.unsigned_abs() as usize,
                    other => panic!("{name}: arity {other:?}"),
                },
                other => panic!("{name}: {other:?}"),
            },
            other => panic!("{name}: {other:?}"),
        };
        let err = cmd(name)
            .arg(vec!["x"; arity - 1])
            .query::<Value>(&mut app)
            .expect_err("internal command refused");
        assert!(
            err_text(&err).starts_with("NOPERM"),
            "{name}: {}",
            err_text(&err)
        );
    }
}

/// With module ACL categories, `dlock`, `bloom` and `ratelimit` list their
/// commands (with read/write/fast/blocking as flagged); without them
/// (Redis 7.0) the module loads and registers none.
#[test]
fn each_family_has_an_acl_category_where_the_server_has_them() {
    let (_server, mut con) = Server::start_conn();
    let all = categories(&mut con);
    if !has_module_categories(&mut con) {
        for family in ["dlock", "bloom", "ratelimit"] {
            assert!(!all.iter().any(|c| c == family), "{all:?}");
        }
        return;
    }
    for (family, member) in [
        ("dlock", "dlock.acquire"),
        ("bloom", "bf.addx"),
        ("ratelimit", "rl.token"),
    ] {
        assert!(all.iter().any(|c| c == family), "{family} in {all:?}");
        let members = commands_in(&mut con, family);
        assert!(
            members.iter().any(|m| m == member),
            "{member} in {family}: {members:?}"
        );
    }
    let blocking = commands_in(&mut con, "blocking");
    assert!(
        blocking.iter().any(|m| m == "dlock.acquire"),
        "{blocking:?}"
    );
    let read = commands_in(&mut con, "read");
    assert!(read.iter().any(|m| m == "bf.existsx"), "{read:?}");
}
