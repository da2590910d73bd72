//! Conversions between `zookeeper-client`'s types and the interface's.

use std::time::Duration;

use zookeeper_client as zkc;

use zkdst_recipes::zk::{AddWatchMode, CreateMode, EventType, SessionState, Stat, WatchedEvent, ZkError, ZkResult};

/// The interface's error for a `zookeeper-client` error.
///
/// Server codes map one to one. `zookeeper-client` reports a server
/// `BadArguments (-8)` as `BadArguments("server error")`; every other
/// `BadArguments(..)` is its own client-side check (nothing was sent) and
/// becomes `InvalidArgument`. Errors that mean "the connection broke with the
/// request in flight" (`NoHosts`, `Timeout`, the crate's custom and
/// unexpected connection errors) become `ConnectionLoss`: the outcome is
/// unknown, which is exactly what `ConnectionLoss` says.
pub fn error(e: zkc::Error) -> ZkError {
    use zkc::Error as E;
    match e {
        E::BadArguments(msg) if *msg == "server error" => ZkError::BadArguments,
        E::BadArguments(msg) => ZkError::InvalidArgument((*msg).to_string()),
        E::NoNode => ZkError::NoNode,
        E::NoAuth => ZkError::NoAuth,
        E::BadVersion => ZkError::BadVersion,
        E::NoChildrenForEphemerals => ZkError::NoChildrenForEphemerals,
        E::NodeExists => ZkError::NodeExists,
        E::NotEmpty => ZkError::NotEmpty,
        E::SessionExpired => ZkError::SessionExpired,
        E::InvalidAcl => ZkError::InvalidAcl,
        E::AuthFailed => ZkError::AuthFailed,
        E::SessionMoved => ZkError::SessionMoved,
        E::NotReadOnly => ZkError::NotReadOnly,
        E::NoWatcher => ZkError::NoWatcher,
        E::QuotaExceeded => ZkError::QuotaExceeded,
        E::Throttled => ZkError::Throttled,
        E::MarshallingError => ZkError::MarshallingError,
        E::Unimplemented => ZkError::Unimplemented,
        E::ConnectionLoss => ZkError::ConnectionLoss,
        E::ClientClosed => ZkError::Closed,
        E::RuntimeInconsistent => ZkError::RuntimeInconsistency,
        E::UnexpectedErrorCode(code) => ZkError::from_code(code).unwrap_or(ZkError::SystemError),
        other => {
            tracing::debug!(error = %other, "zookeeper-client connection error read as ConnectionLoss");
            ZkError::ConnectionLoss
        }
    }
}

pub(crate) fn stat(s: &zkc::Stat) -> Stat {
    Stat {
        czxid: s.czxid,
        mzxid: s.mzxid,
        ctime: s.ctime,
        mtime: s.mtime,
        version: s.version,
        cversion: s.cversion,
        aversion: s.aversion,
        ephemeral_owner: s.ephemeral_owner,
        data_length: s.data_length,
        num_children: s.num_children,
        pzxid: s.pzxid,
    }
}

/// `zookeeper-client`'s create options for a mode (open ACL). TTL modes are
/// checked here as the Java client checks them, before anything is sent.
pub(crate) fn create_options(mode: CreateMode) -> ZkResult<zkc::CreateOptions<'static>> {
    let acls = zkc::Acls::anyone_all();
    let options = match mode {
        CreateMode::Persistent => zkc::CreateMode::Persistent.with_acls(acls),
        CreateMode::Ephemeral => zkc::CreateMode::Ephemeral.with_acls(acls),
        CreateMode::PersistentSequential => zkc::CreateMode::PersistentSequential.with_acls(acls),
        CreateMode::EphemeralSequential => zkc::CreateMode::EphemeralSequential.with_acls(acls),
        CreateMode::Container => zkc::CreateMode::Container.with_acls(acls),
        CreateMode::PersistentWithTtl { ttl_ms } => zkc::CreateMode::Persistent.with_acls(acls).with_ttl(ttl(ttl_ms)?),
        CreateMode::PersistentSequentialWithTtl { ttl_ms } => zkc::CreateMode::PersistentSequential
            .with_acls(acls)
            .with_ttl(ttl(ttl_ms)?),
    };
    Ok(options)
}

fn ttl(ttl_ms: i64) -> ZkResult<Duration> {
    if ttl_ms <= 0 || ttl_ms > CreateMode::MAX_TTL_MS {
        return Err(ZkError::InvalidArgument(format!(
            "ttl must be positive and cannot be larger than: {}",
            CreateMode::MAX_TTL_MS
        )));
    }
    Ok(Duration::from_millis(ttl_ms as u64))
}

pub(crate) fn watch_mode(mode: AddWatchMode) -> zkc::AddWatchMode {
    match mode {
        AddWatchMode::Persistent => zkc::AddWatchMode::Persistent,
        AddWatchMode::PersistentRecursive => zkc::AddWatchMode::PersistentRecursive,
    }
}

pub(crate) fn session_state(s: zkc::SessionState) -> SessionState {
    match s {
        zkc::SessionState::Disconnected => SessionState::Disconnected,
        zkc::SessionState::SyncConnected => SessionState::SyncConnected,
        zkc::SessionState::AuthFailed => SessionState::AuthFailed,
        zkc::SessionState::ConnectedReadOnly => SessionState::ConnectedReadOnly,
        zkc::SessionState::Expired => SessionState::Expired,
        zkc::SessionState::Closed => SessionState::Closed,
    }
}

pub(crate) fn event(e: zkc::WatchedEvent) -> WatchedEvent {
    let event_type = match e.event_type {
        zkc::EventType::Session => return WatchedEvent::session(session_state(e.session_state)),
        zkc::EventType::NodeCreated => EventType::NodeCreated,
        zkc::EventType::NodeDeleted => EventType::NodeDeleted,
        zkc::EventType::NodeDataChanged => EventType::NodeDataChanged,
        zkc::EventType::NodeChildrenChanged => EventType::NodeChildrenChanged,
    };
    WatchedEvent::node(event_type, e.path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_bad_arguments_is_a_server_code() {
        assert_eq!(error(zkc::Error::BadArguments(&"server error")), ZkError::BadArguments);
        assert!(matches!(
            error(zkc::Error::BadArguments(&"can not delete root node")),
            ZkError::InvalidArgument(_)
        ));
        assert_eq!(error(zkc::Error::UnexpectedErrorCode(-110)), ZkError::NodeExists);
        assert_eq!(error(zkc::Error::NoHosts), ZkError::ConnectionLoss);
    }

    #[test]
    fn ttl_bounds_are_checked_before_sending() {
        assert!(create_options(CreateMode::PersistentWithTtl { ttl_ms: 0 }).is_err());
        assert!(create_options(CreateMode::PersistentWithTtl {
            ttl_ms: CreateMode::MAX_TTL_MS + 1
        })
        .is_err());
        assert!(create_options(CreateMode::PersistentWithTtl {
            ttl_ms: CreateMode::MAX_TTL_MS
        })
        .is_ok());
    }
}
