//! One version everywhere: Cargo.toml, MODULE LIST (major×10000 + minor×100 +
//! patch), COMMAND DOCS "since", INFO warden.

use crate::common::*;

fn parts(v: &str) -> (i64, i64, i64) {
    let n: Vec<i64> = v
        .split('.')
        .map(|p| p.parse().expect("numeric version"))
        .collect();
    assert_eq!(n.len(), 3, "version {v}");
    (n[0], n[1], n[2])
}

#[test]
fn module_list_info_and_command_docs_agree_with_cargo() {
    let (_s, mut con) = Server::start_conn();
    let package = env!("CARGO_PKG_VERSION");
    let (major, minor, patch) = parts(package);

    let modules: Vec<Vec<Value>> = query!(&mut con, "MODULE", "LIST");
    let warden = modules
        .iter()
        .find(|m| format!("{m:?}").contains("warden"))
        .expect("warden in MODULE LIST");
    let fields: Vec<String> = warden
        .iter()
        .map(|v| match v {
            Value::Int(i) => i.to_string(),
            other => redis::from_redis_value::<String>(other).unwrap_or_default(),
        })
        .collect();
    let at = fields.iter().position(|f| f == "ver").expect("ver field");
    assert_eq!(
        fields[at + 1],
        (major * 10_000 + minor * 100 + patch).to_string()
    );

    assert_eq!(
        info_field(&mut con, "warden", "warden_version").as_deref(),
        Some(package)
    );

    let names: Vec<String> = query!(&mut con, "COMMAND", "LIST", "FILTERBY", "MODULE", "warden");
    assert!(names.len() >= 10, "{names:?}");
    for name in names {
        let docs: Value = query!(&mut con, "COMMAND", "DOCS", &name);
        let text = format!("{docs:?}");
        let since = text
            .split("since")
            .nth(1)
            .and_then(|rest| rest.split('"').nth(2))
            .unwrap_or_else(|| panic!("{name}: no since in {text}"));
        let v = parts(since);
        assert!(
            v <= (major, minor, patch),
            "{name} since {since} is after {package}"
        );
        assert!(v >= (0, 1, 0), "{name} since {since}");
    }
}
