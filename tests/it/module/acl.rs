//! ACL: the recipe of `docs/operations.md` keeps an application user off the internal
//! commands on every server; where the server has module ACL categories
//! (Valkey 8+, Redis 7.4+) each family has its own.

use crate::common::*;

/// Whether the server is Valkey, and its `redis_version` as (major, minor).
fn server_kind(con: &mut Connection) -> (bool, (u32, u32)) {
    let valkey = info_field(con, "server", "server_name").is_some_and(|n| n == "valkey");
    let version = info_field(con, "server", "redis_version").unwrap_or_default();
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (
        valkey,
        (parts.next().unwrap_or(0), parts.next().unwrap_or(0)),
    )
}

/// Whether a module may add ACL categories here (`RedisModule_AddACLCategory`).
fn has_module_categories(con: &mut Connection) -> bool {
    let (valkey, version) = server_kind(con);
    valkey || version >= (7, 4)
}

/// Whether a module may put its commands in categories here
/// (`RedisModule_SetCommandACLCategories`).
fn has_command_categories(con: &mut Connection) -> bool {
    let (valkey, version) = server_kind(con);
    valkey || version >= (7, 2)
}

fn categories(con: &mut Connection) -> Vec<String> {
    cmd("ACL").arg("CAT").query(con).expect("ACL CAT")
}

/// Whether a user allowed only `+@category` may run `words` (a NOPERM
/// error says not; any other reply or error says it ran).
fn category_admits(
    server: &Server,
    admin: &mut Connection,
    category: &str,
    words: &[&str],
) -> bool {
    let user = format!("only-{category}");
    let _: () = query!(
        admin,
        "ACL",
        "SETUSER",
        &user,
        "reset",
        "on",
        ">secret",
        "~*",
        format!("+@{category}")
    );
    let mut con = server.conn();
    let _: () = query!(&mut con, "AUTH", &user, "secret");
    match command(words).query::<Value>(&mut con) {
        Err(e) => !err_text(&e).starts_with("NOPERM"),
        Ok(_) => true,
    }
}

/// Each category admits the commands flagged for it and not the others
/// (checked by what a user may run: Redis's `ACL CAT <category>` leaves
/// module commands out of its list).
fn assert_categories(server: &Server, con: &mut Connection, rows: &[(&str, &[&str], &[&str])]) {
    for (category, admitted, refused) in rows {
        assert!(
            category_admits(server, con, category, admitted),
            "+@{category} must admit {admitted:?}"
        );
        assert!(
            !category_admits(server, con, category, refused),
            "+@{category} must refuse {refused:?}"
        );
    }
}

/// `@write`, `@read`, `@fast` and `@blocking` hold warden's commands as flagged.
const STANDARD: [(&str, &[&str], &[&str]); 4] = [
    (
        "write",
        &["DLOCK.ACQUIRE", "w", "o", "1000"],
        &["BF.EXISTSX", "f", "x"],
    ),
    (
        "read",
        &["BF.EXISTSX", "f", "x"],
        &["DLOCK.ACQUIRE", "r", "o", "1000"],
    ),
    (
        "fast",
        &["BF.EXISTSX", "f", "x"],
        &["BF.RESERVEX", "g", "0.01", "10"],
    ),
    (
        "blocking",
        &["DLOCK.ACQUIRE", "b", "o", "1000"],
        &["BF.ADDX", "f", "x"],
    ),
];

/// Redis's own ACL categories: any other `ACL CAT` lists is a module's.
const REDIS_CATEGORIES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// The words of a call, as `command` takes them.
fn words(call: &[String]) -> Vec<&str> {
    call.iter().map(String::as_str).collect()
}

/// The ACL categories `COMMAND INFO` gives command `name`, without the `@`.
fn categories_of(con: &mut Connection, name: &str) -> Vec<String> {
    let v: Value = query!(con, "COMMAND", "INFO", name);
    let Value::Array(outer) = &v else {
        panic!("COMMAND INFO {name}: {v:?}")
    };
    let Some(Value::Array(row)) = outer.first() else {
        panic!("COMMAND INFO {name}: {v:?}")
    };
    match row.get(6) {
        Some(Value::Array(c)) | Some(Value::Set(c)) => c
            .iter()
            .filter_map(text_of)
            .map(|c| c.trim_start_matches('@').to_string())
            .collect(),
        other => panic!("{name}: ACL categories {other:?}"),
    }
}

/// The recipe from `docs/operations.md` (read from it): it names every internal command
/// the module registers; the user can lock and add, and is refused each
/// internal command (NOPERM) before it even runs.
#[test]
fn the_documented_recipe_keeps_clients_off_internal_commands() {
    let page = std::fs::read_to_string(repo_root().join("docs/operations.md"))
        .expect("docs/operations.md");
    let recipe: Vec<&str> = page
        .lines()
        .find(|l| l.starts_with("ACL SETUSER app "))
        .expect("the ACL recipe of docs/operations.md")
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
            "the documented recipe does not name {name}: {recipe:?}"
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

/// Where the server lets a module set its commands' categories (Redis 7.2+,
/// Valkey 8+) they join `@write`, `@read`, `@fast` and `@blocking` as
/// flagged; where it may add categories (Redis 7.4+, Valkey 8+) each family
/// has its own, and elsewhere (Redis 7.0 and 7.2) a family's category is
/// refused (`+@dlock`); on Redis 7.0 the module loads and registers none.
#[test]
fn each_family_has_an_acl_category_where_the_server_has_them() {
    let (server, mut con) = Server::start_conn();
    let all = categories(&mut con);
    if has_command_categories(&mut con) {
        assert_categories(&server, &mut con, &STANDARD);
    }
    let names: Vec<String> = query!(&mut con, "COMMAND", "LIST", "FILTERBY", "MODULE", "warden");
    if !has_module_categories(&mut con) {
        for name in &names {
            let mine: Vec<String> = categories_of(&mut con, name)
                .into_iter()
                .filter(|c| !REDIS_CATEGORIES.contains(&c.as_str()))
                .collect();
            assert!(
                mine.is_empty(),
                "{name}: {mine:?} on a server without module categories"
            );
        }
        assert!(!all.iter().any(|c| c == "dlock"), "{all:?}");
        let refused: redis::RedisResult<()> = cmd("ACL")
            .arg(&["SETUSER", "app", "on", ">secret", "+@dlock"])
            .query(&mut con);
        assert!(refused.is_err(), "+@dlock without module categories");
        return;
    }
    // Every registered command is in exactly one of the module's categories
    // (one ACL CAT lists that is not Redis's own), and the commands of one
    // namespace share it.
    let mut of_namespace: Vec<(String, String, String)> = Vec::new();
    for name in &names {
        let listed: Vec<String> = categories_of(&mut con, name)
            .into_iter()
            .filter(|c| all.contains(c))
            .filter(|c| !REDIS_CATEGORIES.contains(&c.as_str()))
            .collect();
        assert_eq!(listed.len(), 1, "{name}: module categories {listed:?}");
        let namespace = name.split('.').next().unwrap_or(name).to_string();
        match of_namespace.iter().find(|(n, _, _)| *n == namespace) {
            Some((_, category, _)) => assert_eq!(category, &listed[0], "{name}"),
            None => of_namespace.push((namespace, listed[0].clone(), name.clone())),
        }
    }
    assert!(of_namespace.len() >= 5, "{of_namespace:?}");
    // Each category lets its user run a public command of its own and no
    // command of another (calls drawn from the docs: a call of the wrong
    // arity is refused before the ACL is asked).
    let public = crate::common::docs::public_commands(&mut con);
    let mut rng = crate::common::payload::Rng(0xac1_ca7);
    let mut call_of = |con: &mut Connection, name: &str| -> Vec<String> {
        let docs = crate::common::docs::command_docs(con, name);
        let call = crate::common::fuzz_calls::valid_call(&mut rng, name, &docs);
        std::iter::once(name.to_string())
            .chain(call.iter().map(|w| String::from_utf8_lossy(w).into_owned()))
            .collect()
    };
    for (namespace, category, _) in &of_namespace {
        let prefix = format!("{namespace}.");
        let own = public.iter().find(|n| n.starts_with(&prefix));
        let other = public.iter().find(|n| !n.starts_with(&prefix));
        let (Some(own), Some(other)) = (own, other) else {
            continue;
        };
        let (own, other) = (call_of(&mut con, own), call_of(&mut con, other));
        assert!(
            category_admits(&server, &mut con, category, &words(&own)),
            "+@{category} must admit {own:?}"
        );
        assert!(
            !category_admits(&server, &mut con, category, &words(&other)),
            "+@{category} must refuse {other:?}"
        );
    }
}
