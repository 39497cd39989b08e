// Records, at build time, the tokio version this program was locked to (Cargo.lock) and
// the compiler's version, for the record's runtime.version.
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    let lock = std::fs::read_to_string("Cargo.lock").unwrap_or_default();
    let mut tokio = "unknown".to_string();
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l.trim() == "name = \"tokio\"" {
            if let Some(v) = lines.next() {
                tokio = v.trim().trim_start_matches("version = ").trim_matches('"').to_string();
            }
            break;
        }
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rv = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.split_whitespace().nth(1).map(str::to_string))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=SERVERBENCH_TOKIO_VERSION={tokio}");
    println!("cargo:rustc-env=SERVERBENCH_RUSTC_VERSION={rv}");
}
