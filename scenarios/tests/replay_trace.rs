//! `zkdst replay` prints a trace stamped with virtual time and node, and
//! two replays of one seed print the same trace and write the same history.

use std::process::Command;

fn replay(seed: u64, trace: &str, history: &std::path::Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_zkdst"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .args([
            "replay",
            "scenarios/lock.toml",
            "--seed",
            &seed.to_string(),
            "--trace",
            trace,
            "--history",
        ])
        .arg(history)
        .output()
        .expect("run zkdst");
    // 0 pass, 1 violation, 2 unknown; 3 would be a usage or input error.
    assert!(
        out.status.code().is_some_and(|c| c <= 2),
        "zkdst failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 trace")
}

/// The trace lines: everything before the verdict line (which carries wall time).
fn trace_lines(out: &str) -> Vec<&str> {
    out.lines()
        .take_while(|l| !l.starts_with("PASS") && !l.starts_with("FAIL") && !l.starts_with("UNKNOWN"))
        .collect()
}

#[test]
fn replay_trace_is_stamped_and_reproducible() {
    let dir = std::env::temp_dir().join(format!("zkdst-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (h1, h2) = (dir.join("a.json"), dir.join("b.json"));
    let a = replay(5, "debug", &h1);
    let b = replay(5, "debug", &h2);
    let (ta, tb) = (trace_lines(&a), trace_lines(&b));
    assert!(
        ta.len() > 1000,
        "a debug trace of a 40 s run has thousands of lines, got {}",
        ta.len()
    );
    assert_eq!(ta, tb, "two replays of one seed printed different traces");
    assert_eq!(
        std::fs::read(&h1).unwrap(),
        std::fs::read(&h2).unwrap(),
        "histories differ"
    );

    // Every line: "<virtual ms>ms <node> <LEVEL> ...", times never going back.
    let mut last = 0.0f64;
    let mut nodes = std::collections::BTreeSet::new();
    for l in &ta {
        let mut w = l.split_whitespace();
        let t: f64 = w
            .next()
            .and_then(|t| t.strip_suffix("ms"))
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| {
                panic!("no virtual time on {l:?}");
            });
        assert!(t >= last, "time went back at {l:?}");
        last = t;
        nodes.insert(w.next().unwrap().trim_end_matches(char::is_numeric).to_string());
        assert!(
            matches!(w.next(), Some("INFO" | "DEBUG" | "WARN" | "ERROR" | "TRACE")),
            "no level on {l:?}"
        );
    }
    assert!(
        nodes.contains("zk") && nodes.contains("client"),
        "nodes seen: {nodes:?}"
    );
    assert!(ta.iter().any(|l| l.contains(" commit 0x")), "debug shows commits");
    assert!(
        ta.iter().any(|l| l.contains(" invoke acquire")),
        "info shows recipe ops"
    );
    std::fs::remove_dir_all(&dir).ok();
}
