//! Lists the families for `src/lib.rs`: each `pub mod <name>;` line of
//! lib.rs but the shared `common` and `glue`, in order, becomes an entry of
//! `FAMILIES` (written to `$OUT_DIR/families.rs`, which lib.rs includes), so
//! a family is added by its folder and its one `pub mod` line.

use std::path::Path;
use std::{env, fs};

fn main() {
    println!("cargo:rerun-if-changed=src/lib.rs");
    let lib = fs::read_to_string("src/lib.rs").expect("src/lib.rs is readable");
    let entries: String = lib
        .lines()
        .filter_map(|line| line.strip_prefix("pub mod ")?.strip_suffix(';'))
        .filter(|module| !matches!(*module, "common" | "glue"))
        .map(|family| format!("&{family}::FAMILY, "))
        .collect();
    let code = format!(
        "/// The module's families, in `lib.rs`'s order, then the parts they share.\n\
         static FAMILIES: &[&Family] = &[{entries}&glue::SHARED];\n"
    );
    let out = env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    fs::write(Path::new(&out).join("families.rs"), code).expect("OUT_DIR is writable");
}
