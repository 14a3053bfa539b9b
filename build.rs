//! Lists the families, from the `pub mod <name>;` lines of `src/lib.rs` but the
//! shared `common` and `glue`, in order, so a family is added by its folders and its
//! one `pub mod` line:
//!
//! - `$OUT_DIR/families.rs`, which lib.rs includes: `FAMILIES`, each family's
//!   `FAMILY`, then the parts they share;
//! - `$OUT_DIR/test_families.rs`, which the integration tests include
//!   (`tests/it/common/grammar.rs`): `FAMILY_FUZZ`, each family's part of the command
//!   fuzzer, `tests/it/<family>/fuzz_values.rs`'s `FUZZ`, so a family without one
//!   does not compile;
//! - `$OUT_DIR/test_kits.rs`, which `tests/it/common/kit.rs` includes:
//!   `FAMILY_KITS`, what the checks across families need of each family,
//!   `tests/it/<family>/kit.rs`'s `KIT`, so a family without one does not compile.

use std::path::Path;
use std::{env, fs};

fn main() {
    println!("cargo:rerun-if-changed=src/lib.rs");
    let lib = fs::read_to_string("src/lib.rs").expect("src/lib.rs is readable");
    let families: Vec<&str> = lib
        .lines()
        .filter_map(|line| line.strip_prefix("pub mod ")?.strip_suffix(';'))
        .filter(|module| !matches!(*module, "common" | "glue"))
        .collect();
    let entries = |entry: fn(&str) -> String| families.iter().map(|f| entry(f)).collect::<String>();
    write(
        "families.rs",
        format!(
            "/// The module's families, in `lib.rs`'s order, then the parts they share.\n\
             static FAMILIES: &[&Family] = &[{}&glue::SHARED];\n",
            entries(|f| format!("&{f}::FAMILY, "))
        ),
    );
    write(
        "test_families.rs",
        format!(
            "/// Each family's part of the command fuzzer, in `src/lib.rs`'s order.\n\
             pub const FAMILY_FUZZ: &[&crate::common::grammar::FamilyFuzz] = &[{}];\n",
            entries(|f| format!("&crate::{f}::fuzz_values::FUZZ, "))
        ),
    );
    write(
        "test_kits.rs",
        format!(
            "/// Each family's part of the checks across families, in `src/lib.rs`'s order.\n\
             pub static FAMILY_KITS: &[&FamilyKit] = &[{}];\n",
            entries(|f| format!("&crate::{f}::kit::KIT, "))
        ),
    );
}

/// Writes `code` to `name` in `OUT_DIR`.
fn write(name: &str, code: String) {
    let out = env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    fs::write(Path::new(&out).join(name), code).expect("OUT_DIR is writable");
}
