//! The shared command-line cases (tests/conformance/parser-cases.json, generated from
//! spec/cli.json) run in process through command_line, the part of main before any socket:
//! every usage case must be refused naming what its `mentions` list. (Whether the file is
//! current is the Python suite's check, tests/python/conformance/test_parser_cases.py.)

use crate::cli::{LANGUAGE, spec};
use crate::command_line;
use serde_json::Value;
use std::path::PathBuf;

fn cases() -> Value {
    let start = std::env::current_dir().expect("working directory");
    let root: PathBuf = start
        .ancestors()
        .find(|d| d.join("tests/conformance/parser-cases.json").is_file())
        .unwrap_or_else(|| panic!("no tests/conformance/parser-cases.json above {}", start.display()))
        .to_path_buf();
    let text = std::fs::read_to_string(root.join("tests/conformance/parser-cases.json")).expect("readable cases");
    serde_json::from_str(&text).expect("parser-cases.json is JSON")
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_usage_case_is_refused_naming_its_mentions() {
    let all = cases();
    let mine = &all["languages"][LANGUAGE];
    let usage = mine["usage"].as_array().expect("usage cases");
    assert!(usage.len() > 50, "only {} usage cases", usage.len());
    let spec = spec();
    for case in usage {
        let args = strings(&case["args"]);
        match command_line(&spec, &args) {
            Ok(_) => panic!("{args:?}: accepted"),
            Err(e) => {
                for m in strings(&case["mentions"]) {
                    assert!(e.contains(&m), "{args:?}: {e:?} does not mention {m:?}");
                }
            }
        }
    }
    for case in mine["valid"].as_array().expect("valid cases") {
        let args = strings(&case["args"]);
        assert!(command_line(&spec, &args).is_ok(), "{args:?}: refused");
    }
}
