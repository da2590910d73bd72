use super::canvas::nice_step;
use super::faults::FaultClass;
use super::*;
use crate::history::SessionState;
use crate::history::{Event, FaultEvent, FaultStep, Op, Outcome, TxnRecord, Value};
use crate::properties::testkit::{Builder, MS};
use crate::properties::{run_all, Params};

fn acq() -> Op {
    Op::Acquire {
        lock: "/l".into(),
        shared: false,
    }
}

fn bad_history() -> History {
    let mut b = Builder::new();
    let a = b.invoke_s(0, 1, Some(0x10), acq());
    b.complete_z(
        a,
        10,
        Outcome::Ok {
            value: Value::Token { token: 1 },
        },
        Some(0x1_0000_0005),
    );
    b.fault(12, "partition-halves");
    b.ok(15, 30, 2, acq(), Value::Token { token: 2 });
    b.session(20, 2, 0x20, SessionState::SyncConnected);
    b.fault(40, "heal");
    b.info(
        45,
        50,
        3,
        Op::Enqueue {
            queue: "q".into(),
            item: "<x>".into(),
            priority: 0,
        },
    );
    b.ok(60, 61, 1, Op::Release { lock: "/l".into() }, Value::Unit);
    b.watch(62, 2, "NodeDeleted", "/l/n");
    b.build()
}

/// A fault event by any word a zkdst history wrote (older simulator words
/// included, as an older stored history has them).
fn fault(time: u64, kind: &str, targets: &[&str], detail: &str) -> Event {
    let targets: Vec<String> = targets.iter().map(|t| t.to_string()).collect();
    let step = FaultStep::read(kind, &targets, detail).unwrap_or_else(|| panic!("no fault {kind:?}"));
    Event::Fault(FaultEvent::new(time * MS, step, targets, detail))
}

fn commit(time: u64, server: u32, zxid: i64) -> Event {
    Event::Commit {
        time: time * MS,
        server,
        zxid,
        txn: TxnRecord::Delete { path: "/x".into() },
        session: None,
        xid: None,
    }
}

fn connected(time: u64, client: u32, server: u32) -> Event {
    Event::Session {
        time: time * MS,
        client,
        session: 0x30,
        state: SessionState::SyncConnected,
        server: Some(server),
    }
}

/// The `data-row` of every element whose class starts with `class`.
fn rows_of(html: &str, class: &str) -> Vec<String> {
    html.split(&format!("class=\"{class}"))
        .skip(1)
        .filter_map(|rest| {
            let tag = &rest[..rest.find('>').unwrap_or(rest.len())];
            let r = tag.split("data-row=\"").nth(1)?;
            Some(r[..r.find('"')?].to_string())
        })
        .collect()
}

#[test]
fn html_is_self_contained_with_every_lane_and_the_violation() {
    let h = bad_history();
    let results = run_all(&["mutex", "queue"], &h, &Params::default()).unwrap();
    assert!(results[0].is_violation());
    let html = render_html(&h, &results);
    assert!(!html.contains("http://"));
    assert!(!html.contains("https://"));
    assert!(!html.contains("src="), "no external scripts or images");
    assert!(!html.contains("<link"), "no external stylesheets");
    for c in [1, 2, 3] {
        assert!(html.contains(&format!("data-client=\"{c}\"")), "lane {c}");
    }
    assert!(html.contains("violation-marker"));
    assert!(html.contains("class=\"op ok viol\""));
    assert!(html.contains("class=\"op info\""));
    assert!(html.contains("class=\"band f-net\""), "the partition is a network band");
    assert!(html.contains("&lt;x&gt;"), "op details are escaped");
    assert_eq!(html, render_html(&h, &results), "a pure function of its input");
}

#[test]
fn faults_at_nearly_the_same_time_get_different_label_rows() {
    let mut h = bad_history();
    h.events.push(fault(20, "drop-connection", &["client1"], ""));
    // Recorded twice by the simulator: drawn once.
    h.events.push(fault(20, "drop-connection", &["client1"], ""));
    h.events.push(fault(21, "drop-connection", &["client2"], ""));
    h.events.sort_by_key(Event::time);
    let html = render_html(&h, &[]);
    let rows = rows_of(&html, "band f-conn");
    assert_eq!(rows.len(), 2, "one band per fault: {rows:?}");
    assert_ne!(rows[0], rows[1], "labels on different rows");
    assert!(html.contains(">drop-connection client1<") && html.contains(">drop-connection client2<"));
}

#[test]
fn faults_pair_with_what_undid_them() {
    let mut h = History::new();
    h.events = vec![
        fault(10, "partition", &["zk1", "zk2,zk3"], "groups zk1 | zk2,zk3"),
        fault(20, "kill", &["zk2"], ""),
        fault(30, "heal", &[], "all links restored"),
        fault(35, "latency", &[], "16..38 ms"),
        fault(40, "restart", &["zk2"], ""),
        fault(45, "latency", &[], "1..10 ms"),
        fault(50, "pause", &["client1"], ""),
        fault(60, "cut", &["zk1", "zk3"], "zk1 -> zk3 dropped"),
        Event::Note {
            time: 100 * MS,
            client: None,
            text: "end".into(),
        },
    ];
    let s = faults::spans(&h, 100 * MS);
    let got: Vec<(&str, u64, u64, Option<&str>)> = s
        .iter()
        .map(|f| (f.kind.name(), f.start / MS, f.end / MS, f.ended_by.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("partition-halves", 10, 30, Some("heal")),
            ("kill-server", 20, 40, Some("restart")),
            ("latency-spike", 35, 45, Some("restore-latency")),
            ("pause-client", 50, 100, None),
            ("one-way-cut", 60, 100, None),
        ]
    );
}

#[test]
fn faults_carry_the_plans_words() {
    let mut h = History::new();
    h.events = vec![
        fault(
            10,
            "isolate-leader",
            &["zk1", "zk2,zk3,client1"],
            "groups zk1 | zk2,zk3,client1",
        ),
        fault(12, "kill-leader", &["zk2"], ""),
        fault(14, "restart", &["zk2"], ""),
        fault(
            20,
            "expire-session",
            &["client1", "zk1,zk2,zk3"],
            "groups client1 | zk1,zk2,zk3",
        ),
        fault(30, "heal", &[], "all links restored"),
        fault(31, "client-cut", &["client2"], "client2 cut from zk1"),
        fault(32, "expire-session", &["0x5"], "the leader zk1 expires it"),
        fault(33, "resume", &["client3"], ""),
        fault(40, "heal", &[], "all links restored"),
    ];
    let s = faults::spans(&h, 100 * MS);
    let got: Vec<(&str, u64, u64, Option<&str>, FaultClass)> = s
        .iter()
        .map(|f| (f.kind.name(), f.start / MS, f.end / MS, f.ended_by.as_deref(), f.class))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "isolate-leader",
                10,
                20,
                Some("replaced by a partition"),
                FaultClass::Network
            ),
            ("kill-leader", 12, 14, Some("restart"), FaultClass::Crash),
            ("expire-session", 20, 30, Some("heal"), FaultClass::Network),
            ("client-cut", 31, 40, Some("heal"), FaultClass::Network),
            ("expire-session", 32, 32, None, FaultClass::Connection),
            ("resume", 33, 33, None, FaultClass::Other),
        ]
    );
    let servers: std::collections::BTreeSet<u32> = [1, 2, 3].into();
    let cut = servers::cut_nodes(&s[0], &servers);
    assert_eq!(
        cut,
        vec![("zk1".to_string(), "cut: minority".to_string())],
        "the isolated leader"
    );
    let cut = servers::cut_nodes(&s[2], &servers);
    assert_eq!(
        cut,
        vec![("client1".to_string(), "cut: minority".to_string())],
        "the expiring client"
    );
}

#[test]
fn a_lane_per_server_with_its_leadership_and_cuts() {
    let mut h = bad_history();
    h.events.extend([
        commit(1, 1, 0x1_0000_0001),
        commit(2, 1, 0x1_0000_0002),
        fault(5, "partition", &["zk1", "zk2,zk3,client1"], ""),
        fault(6, "kill", &["zk1"], ""),
        commit(8, 2, 0x2_0000_0001),
        connected(9, 2, 3),
    ]);
    h.events.sort_by_key(Event::time);
    let html = render_html(&h, &[]);
    for s in [1, 2, 3] {
        assert!(html.contains(&format!("data-server=\"{s}\"")), "lane for zk{s}");
    }
    let faults = faults::spans(&h, 100 * MS);
    let leaders = servers::leaders(&h, &faults, 100 * MS);
    let got: Vec<(u32, u64, u64, &str)> = leaders
        .iter()
        .map(|(s, l)| (*s, l.start / MS, l.end / MS, l.label.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![(1, 1, 6, "leader e1"), (2, 8, 100, "leader e2")],
        "zk1 led until killed"
    );
    let spans = servers::server_spans(&h, &faults, 100 * MS);
    let states = |s: u32| spans[&s].iter().map(|x| x.state).collect::<Vec<_>>();
    assert_eq!(states(1), vec!["leader", "cut", "down"], "zk1 alone is a minority");
    assert_eq!(states(2), vec!["leader"], "zk2 is on the majority side");
    assert!(html.contains("class=\"st st-down\""));
    assert!(html.contains(">leader e2<"));
}

#[test]
fn client_lanes_show_the_server_they_are_on() {
    let mut h = bad_history();
    h.events.push(connected(20, 2, 3));
    h.events.sort_by_key(Event::time);
    let html = render_html(&h, &[]);
    assert!(html.contains("class=\"conn\""));
    assert!(html.contains("client 2 connected to zk3"));
    assert!(html.contains(">zk3<"), "the strip names the server");
}

#[test]
fn a_violation_is_drawn_across_the_lanes_it_involves() {
    let h = bad_history();
    let results = run_all(&["mutex"], &h, &Params::default()).unwrap();
    let html = render_html(&h, &results);
    assert!(
        html.contains("class=\"violation-overlay\" data-violation=\"1\" data-clients=\"1 2\""),
        "the overlay names both lanes"
    );
    let overlay = html.split("class=\"violation-overlay\"").nth(1).unwrap();
    let overlay = &overlay[..overlay.find("</g>").unwrap()];
    assert!(overlay.contains("class=\"vspan\"") && overlay.contains("data-client=\"1\""));
    assert!(overlay.contains("data-client=\"2\""));
    assert!(html.contains("class=\"vlink\""), "bracketed across its lanes");
    assert_eq!(html.matches(">V1<").count(), 2, "tagged on each lane it involves");
    assert!(html.contains(">V1 mutex: mutex-overlap<"), "the band is labelled");
    assert!(html.contains("<a href=\"#t="), "the list links to a zoomed view");
    assert!(
        !html.contains("data-client=\"3\" data-tip=\"V1"),
        "client 3 is not involved"
    );
}

#[test]
fn hover_details_give_times_session_result_and_zxid() {
    let h = bad_history();
    let html = render_html(&h, &[]);
    let tip = html
        .split("data-op=\"1\"")
        .nth(1)
        .and_then(|r| r.split("data-tip=\"").nth(1))
        .map(|r| &r[..r.find('"').unwrap()])
        .unwrap();
    for want in [
        "session 0x10",
        "invoked 0 ms",
        "completed 10 ms",
        "zxid 0x100000005",
        "result: ok",
    ] {
        assert!(tip.contains(want), "{want} in {tip}");
    }
}

#[test]
fn text_report_names_ops_times_and_hint() {
    let h = bad_history();
    let results = run_all(&["mutex"], &h, &Params::default()).unwrap();
    let text = super::super::render_text(&h, &results);
    assert!(text.contains("mutex: VIOLATION (1)"), "{text}");
    assert!(text.contains("op 1: client 1 session 0x10"), "{text}");
    assert!(text.contains("10 ms"), "{text}");
    assert!(text.contains("hint:") && text.contains("fencing"), "{text}");
}

#[test]
fn tick_steps_are_round() {
    assert_eq!(nice_step(1_000_000_000), 100_000_000);
    assert_eq!(nice_step(37), 5);
}
