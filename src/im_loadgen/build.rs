// The compiler's release (`rustc -vV`, its "release:" line), for the record's runtime.version.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let verbose = std::process::Command::new(rustc)
        .arg("-vV")
        .output()
        .map(|o| o.stdout)
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&verbose);
    let release = text
        .lines()
        .find_map(|l| l.strip_prefix("release: "))
        .unwrap_or("unknown");
    println!("cargo:rustc-env=SERVERBENCH_RUSTC_VERSION={release}");
}
