//! Writes a demo timeline and text report for a small lock history with a
//! partition: `cargo run -p zkdst-checker --example timeline_demo -- OUT.html`.

use zkdst_checker::history::{Event, FaultEnd, FaultEvent, FaultKind, History, Op, Outcome, SessionState, Value};
use zkdst_checker::properties::{run_all, Params};
use zkdst_checker::report::{render_html, render_text};

fn main() {
    const MS: u64 = 1_000_000;
    let mut h = History::new();
    h.meta.insert("scenario".into(), "lock-expired-but-acting".into());
    h.meta.insert("seed".into(), "42".into());
    let mut id = 0;
    let mut op = |h: &mut History, t0: u64, t1: Option<u64>, client: u32, session: i64, op: Op, outcome: Outcome| {
        id += 1;
        h.events.push(Event::Invoke {
            id,
            time: t0 * MS,
            client,
            session: Some(session),
            op,
            background: false,
        });
        if let Some(t1) = t1 {
            h.events.push(Event::Complete {
                id,
                time: t1 * MS,
                client,
                outcome,
                zxid: None,
            });
        }
    };
    let tok = |t| Outcome::Ok {
        value: Value::Token { token: t },
    };
    let unit = Outcome::Ok { value: Value::Unit };
    op(
        &mut h,
        0,
        Some(40),
        1,
        0x11,
        Op::Acquire {
            lock: "/lock".into(),
            shared: false,
        },
        tok(1),
    );
    op(
        &mut h,
        10,
        Some(900),
        2,
        0x12,
        Op::Acquire {
            lock: "/lock".into(),
            shared: false,
        },
        tok(2),
    );
    op(
        &mut h,
        50,
        Some(70),
        1,
        0x11,
        Op::FencedWrite {
            resource: "db".into(),
            token: 1,
        },
        unit.clone(),
    );
    h.events.push(Event::Fault(FaultEvent::new(
        100 * MS,
        FaultKind::ClientCut.into(),
        vec!["client1".into()],
        "client1 cut from zk1,zk2,zk3",
    )));
    op(
        &mut h,
        920,
        Some(940),
        2,
        0x12,
        Op::FencedWrite {
            resource: "db".into(),
            token: 2,
        },
        unit.clone(),
    );
    h.events.push(Event::Session {
        time: 1200 * MS,
        client: 1,
        session: 0x11,
        state: SessionState::Expired,
        server: Some(2),
    });
    h.events.push(Event::Fault(FaultEvent::new(
        1150 * MS,
        FaultEnd::Heal.into(),
        vec![],
        "",
    )));
    op(
        &mut h,
        1000,
        Some(1020),
        1,
        0x11,
        Op::FencedWrite {
            resource: "db".into(),
            token: 1,
        },
        unit.clone(),
    );
    op(
        &mut h,
        1100,
        Some(1300),
        3,
        0x13,
        Op::Enqueue {
            queue: "q".into(),
            item: "a".into(),
            priority: 0,
        },
        Outcome::Info {
            error: "ConnectionLoss".into(),
        },
    );
    op(
        &mut h,
        1310,
        Some(1330),
        3,
        0x13,
        Op::Create {
            path: "/x".into(),
            data: "d".into(),
            mode: zkdst_checker::history::CreateMode::Persistent,
        },
        Outcome::Ok {
            value: Value::Error {
                code: "NodeExists".into(),
                results: vec![],
            },
        },
    );
    op(
        &mut h,
        1400,
        None,
        4,
        0x14,
        Op::Acquire {
            lock: "/other".into(),
            shared: false,
        },
        unit,
    );
    h.events.push(Event::Watch {
        time: 950 * MS,
        client: 4,
        session: 0x14,
        event: "NodeDeleted".into(),
        path: Some("/lock/n1".into()),
    });
    h.events.sort_by_key(Event::time);
    let results = run_all(
        &["mutex", "fencing", "queue", "liveness"],
        &h,
        &Params {
            liveness_bound_ms: 100,
            ..Params::default()
        },
    )
    .unwrap_or_default();
    let out = std::env::args().nth(1).unwrap_or_else(|| "timeline.html".into());
    if let Err(e) = std::fs::write(&out, render_html(&h, &results)) {
        eprintln!("cannot write {out}: {e}");
        std::process::exit(1);
    }
    print!("{}", render_text(&h, &results));
}
