//! The integration tests' build script: with the module's build script's
//! list of the families (`src/lib.rs`'s `pub mod` lines, in order), writes
//!
//! - `$OUT_DIR/test_families.rs`, which `common/grammar.rs` includes:
//!   `FAMILY_FUZZ`, each family's part of the command fuzzer,
//!   `tests/it/<family>/fuzz_values.rs`'s `FUZZ`, so a family without one
//!   does not compile;
//! - `$OUT_DIR/test_kits.rs`, which `common/kit.rs` includes: `FAMILY_KITS`,
//!   what the checks across families need of each family,
//!   `tests/it/<family>/kit.rs`'s `KIT`, so a family without one does not
//!   compile.

use std::path::Path;

// Its `main` is the module's own and unused here.
#[allow(dead_code)]
#[path = "../../build.rs"]
mod module_build;

use module_build::{entries, families, write};

fn main() {
    let families = families(Path::new("../.."));
    write(
        "test_families.rs",
        format!(
            "/// Each family's part of the command fuzzer, in `src/lib.rs`'s order.\n\
             pub const FAMILY_FUZZ: &[&crate::common::grammar::FamilyFuzz] = &[{}];\n",
            entries(&families, |f| format!("&crate::{f}::fuzz_values::FUZZ, "))
        ),
    );
    write(
        "test_kits.rs",
        format!(
            "/// Each family's part of the checks across families, in `src/lib.rs`'s order.\n\
             pub static FAMILY_KITS: &[&FamilyKit] = &[{}];\n",
            entries(&families, |f| format!("&crate::{f}::kit::KIT, "))
        ),
    );
}
