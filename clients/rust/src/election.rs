//! zkdst's leader election, as the Rust `election` workload campaigns:
//! campaign, act as leader with the token while the leadership holds,
//! report its loss, resign.

use std::sync::Arc;
use std::time::Duration;

use zkdst_history::{Op, Outcome, Value};
use zkdst_recipes::election::Election;
use zkdst_recipes::zk::ZkClient;

use crate::env::{Env, Session};
use crate::lock::outcome_of;
use crate::{Resource, Rng};

pub const ELECTION: &str = "/elections/e";

pub async fn client(env: Arc<Env>, i: u32, resource: Arc<Resource>) {
    let rec = &env.record;
    let mut rng = Rng::new(env.seed, i);
    while env.running() {
        let Some(s) = Session::connect(&env, i).await else {
            break;
        };
        let e = Election::new(s.ctx.clone(), ELECTION);
        while env.running() && !s.ended() {
            let sid = s.id();
            let id = rec.invoke(
                i,
                sid,
                Op::Campaign {
                    election: ELECTION.into(),
                },
            );
            let data = format!("client{i}");
            let r = e
                .campaign_for(data.as_bytes(), env.left() + 2 * env.session_timeout)
                .await;
            s.sync();
            match r {
                Ok(None) => {
                    rec.complete(
                        i,
                        id,
                        Outcome::Info {
                            error: "still campaigning when the run ended".into(),
                        },
                    );
                    break;
                }
                Err(err) => rec.complete(i, id, outcome_of(&err)),
                Ok(Some(l)) => {
                    let token = l.token();
                    rec.ok(i, id, Value::Token { token });
                    for _ in 0..rng.between(1, 4) {
                        s.sync();
                        if !l.is_leader() {
                            let reason = format!("{:?}", l.state());
                            rec.report(
                                i,
                                sid,
                                Op::LeadershipLost {
                                    election: ELECTION.into(),
                                    token,
                                    reason,
                                },
                            );
                            break;
                        }
                        let act = Op::LeaderAct {
                            election: ELECTION.into(),
                            token,
                        };
                        resource.write(rec, i, sid, ELECTION, token, act).await;
                        tokio::time::sleep(Duration::from_millis(rng.between(10, 100))).await;
                    }
                    let rid = rec.invoke(
                        i,
                        sid,
                        Op::Resign {
                            election: ELECTION.into(),
                        },
                    );
                    let resigned = l.resign().await;
                    s.sync();
                    match resigned {
                        Ok(_) => rec.ok(i, rid, Value::Unit),
                        Err(err) => rec.complete(i, rid, Outcome::Info { error: err.to_string() }),
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(rng.between(5, 50))).await;
        }
        s.zk.close().await;
    }
}
