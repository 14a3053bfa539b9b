//! The module's build script: lists the families, from the `pub mod <name>;`
//! lines of `src/lib.rs` but the shared `common` and `glue`, in order, so a
//! family is added by its folders and its one `pub mod` line, and writes
//! `$OUT_DIR/families.rs`, which lib.rs includes: `FAMILIES`, each family's
//! `FAMILY`, then the parts they share. The integration tests' build script
//! (`tests/it/build.rs`) lists the families with this file's `families`.

use std::path::Path;
use std::{env, fs};

fn main() {
    let families = families(Path::new("."));
    write(
        "families.rs",
        format!(
            "/// The module's families, in `lib.rs`'s order, then the parts they share.\n\
             static FAMILIES: &[&Family] = &[{}&glue::SHARED];\n",
            entries(&families, |f| format!("&{f}::FAMILY, "))
        ),
    );
}

/// The families `root/src/lib.rs` declares, in its order (and tells cargo to
/// run the build script again when that file changes).
pub fn families(root: &Path) -> Vec<String> {
    let lib_rs = root.join("src/lib.rs");
    println!("cargo:rerun-if-changed={}", lib_rs.display());
    let lib = fs::read_to_string(&lib_rs).expect("src/lib.rs is readable");
    lib.lines()
        .filter_map(|line| line.strip_prefix("pub mod ")?.strip_suffix(';'))
        .filter(|module| !matches!(*module, "common" | "glue"))
        .map(str::to_string)
        .collect()
}

/// `entry` of each family, one after another.
pub fn entries(families: &[String], entry: impl Fn(&str) -> String) -> String {
    families.iter().map(|f| entry(f)).collect()
}

/// Writes `code` to `name` in `OUT_DIR`.
pub fn write(name: &str, code: String) {
    let out = env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    fs::write(Path::new(&out).join(name), code).expect("OUT_DIR is writable");
}
