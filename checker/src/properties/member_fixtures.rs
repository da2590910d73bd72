//! Hand-built membership ops shared by the member checks' tests: client
//! member `m1` of group `/groups/g`, its node held by an older session.

use crate::history::{Op, Stat, Value};

pub const NODE: &str = "/groups/g/m1";

pub fn join() -> Op {
    Op::Join {
        group: "/groups/g".into(),
        member: "m1".into(),
    }
}

pub fn leave() -> Op {
    Op::Leave {
        group: "/groups/g".into(),
        member: "m1".into(),
    }
}

/// A watched `exists` of the member's node.
pub fn exists() -> Op {
    Op::Exists {
        path: NODE.into(),
        watch: true,
    }
}

/// The reply of [`exists`] while session 0x20 holds the node.
pub fn held() -> Value {
    Value::Stat {
        stat: Some(Stat {
            ephemeral_owner: 0x20,
            ..Stat::default()
        }),
    }
}
