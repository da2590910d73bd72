//! zookeeper-client's own lock recipe (`Client::lock`) as the library's
//! [`LockFn`]: scenarios with `recipe = "library-lock"` contend through it.

use std::any::Any;

use futures::future::BoxFuture;
use zkdst_real::{error_of, RealClient};
use zkdst_recipes::zk::{ZkError, ZkResult};
use zkdst_sim::client::library_lock::{LibraryHold, LockFn, LockPrefix};
use zookeeper_client as zkc;

/// The lock node's name after the prefix (Curator's `lock-`).
const NAME: &str = "lock-";

struct Hold {
    lock: zkc::OwnedLockClient,
    czxid: Option<i64>,
}

impl LibraryHold for Hold {
    fn node(&self) -> &str {
        self.lock.lock_path()
    }

    fn czxid(&self) -> Option<i64> {
        self.czxid
    }

    fn checked_set<'a>(&'a self, path: &'a str, data: &'a [u8]) -> BoxFuture<'a, ZkResult<()>> {
        Box::pin(async move { self.lock.set_data(path, data, None).await.map(|_| ()).map_err(error_of) })
    }
}

fn lock<'a>(
    session: &'a (dyn Any + Send + Sync),
    dir: &'a str,
    prefix: LockPrefix,
) -> BoxFuture<'a, ZkResult<Box<dyn LibraryHold>>> {
    Box::pin(async move {
        let real = session.downcast_ref::<RealClient>().ok_or(ZkError::Unimplemented)?;
        let zk = real.raw().ok_or(ZkError::Closed)?;
        let shared = format!("{dir}/{NAME}");
        let prefix = match prefix {
            LockPrefix::Curator => zkc::LockPrefix::new_curator(dir, NAME),
            LockPrefix::Shared => zkc::LockPrefix::new_shared(&shared),
        }
        .map_err(error_of)?;
        // The directory is created when missing (a fault may delete it).
        let open = zkc::Acls::anyone_all();
        let options = zkc::LockOptions::new(open)
            .with_ancestor_options(zkc::CreateMode::Persistent.with_acls(open))
            .map_err(error_of)?;
        let lock = zk.lock(prefix, b"", options).await.map_err(error_of)?.into_owned();
        // The token: the node's czxid, read once (a lost reply is retried;
        // the node is ours until the session ends).
        let mut czxid = None;
        for _ in 0..3 {
            match zk.check_stat(lock.lock_path()).await {
                Ok(stat) => {
                    czxid = stat.map(|s| s.czxid);
                    break;
                }
                Err(zkc::Error::ConnectionLoss) => continue,
                Err(_) => break,
            }
        }
        Ok(Box::new(Hold { lock, czxid }) as Box<dyn LibraryHold>)
    })
}

/// The lock, as `Library::lock` takes it.
pub const LOCK: LockFn = lock;
