//! Strategies for every record, and the case budget shared by the property
//! tests: `ZKDST_WIRE_CASES` (default 20,000) is the total over all of them,
//! each test taking its share.
#![allow(dead_code)]

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::test_runner::Config;
use zkdst_wire::*;

/// A proptest config running `share` (in percent) of the total case budget.
pub fn config(share: u32) -> Config {
    let total: u64 = std::env::var("ZKDST_WIRE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let cases = (total * u64::from(share) / 100).max(1);
    Config {
        cases: u32::try_from(cases).unwrap_or(u32::MAX),
        failure_persistence: None,
        ..Config::default()
    }
}

pub fn text() -> impl Strategy<Value = String> {
    prop_oneof![3 => "[/a-z0-9_-]{0,12}", 1 => "\\PC{0,6}"]
}

pub fn bytes() -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 0..24)
}

pub fn data() -> impl Strategy<Value = Option<Vec<u8>>> {
    option::weighted(0.9, bytes())
}

pub fn texts() -> impl Strategy<Value = Vec<String>> {
    vec(text(), 0..4)
}

pub fn stat() -> impl Strategy<Value = Stat> {
    (
        (any::<i64>(), any::<i64>(), any::<i64>(), any::<i64>()),
        (any::<i32>(), any::<i32>(), any::<i32>()),
        (any::<i64>(), any::<i32>(), any::<i32>(), any::<i64>()),
    )
        .prop_map(
            |((czxid, mzxid, ctime, mtime), (version, cversion, aversion), (eo, dl, nc, pzxid))| Stat {
                czxid,
                mzxid,
                ctime,
                mtime,
                version,
                cversion,
                aversion,
                ephemeral_owner: eo,
                data_length: dl,
                num_children: nc,
                pzxid,
            },
        )
}

pub fn acl() -> impl Strategy<Value = Vec<Acl>> {
    vec(
        (any::<i32>(), text(), text()).prop_map(|(perms, scheme, id)| Acl {
            perms,
            id: Id { scheme, id },
        }),
        0..3,
    )
}

pub fn watch_request() -> impl Strategy<Value = WatchRequest> {
    (text(), any::<bool>()).prop_map(|(path, watch)| WatchRequest { path, watch })
}

pub fn versioned() -> impl Strategy<Value = VersionedPath> {
    (text(), any::<i32>()).prop_map(|(path, version)| VersionedPath { path, version })
}

pub fn path_request() -> impl Strategy<Value = PathRequest> {
    text().prop_map(|path| PathRequest { path })
}

pub fn create() -> impl Strategy<Value = CreateRequest> {
    (text(), data(), acl(), any::<i32>()).prop_map(|(path, data, acl, flags)| CreateRequest { path, data, acl, flags })
}

pub fn create_ttl() -> impl Strategy<Value = CreateTtlRequest> {
    (create(), any::<i64>()).prop_map(|(c, ttl)| CreateTtlRequest {
        path: c.path,
        data: c.data,
        acl: c.acl,
        flags: c.flags,
        ttl,
    })
}

pub fn set_data() -> impl Strategy<Value = SetDataRequest> {
    (text(), data(), any::<i32>()).prop_map(|(path, data, version)| SetDataRequest { path, data, version })
}

pub fn write_op() -> impl Strategy<Value = WriteOp> {
    prop_oneof![
        create().prop_map(WriteOp::Create),
        create().prop_map(WriteOp::Create2),
        create().prop_map(WriteOp::CreateContainer),
        create_ttl().prop_map(WriteOp::CreateTtl),
        versioned().prop_map(WriteOp::Delete),
        set_data().prop_map(WriteOp::SetData),
        versioned().prop_map(WriteOp::Check),
    ]
}

pub fn read_op() -> impl Strategy<Value = ReadOp> {
    prop_oneof![
        watch_request().prop_map(ReadOp::GetChildren),
        watch_request().prop_map(ReadOp::GetData)
    ]
}

pub fn set_watches() -> impl Strategy<Value = SetWatches> {
    (any::<i64>(), texts(), texts(), texts()).prop_map(|(relative_zxid, d, e, c)| SetWatches {
        relative_zxid,
        data_watches: d,
        exist_watches: e,
        child_watches: c,
    })
}

pub fn set_watches2() -> impl Strategy<Value = SetWatches2> {
    (set_watches(), texts(), texts()).prop_map(|(s, p, pr)| SetWatches2 {
        relative_zxid: s.relative_zxid,
        data_watches: s.data_watches,
        exist_watches: s.exist_watches,
        child_watches: s.child_watches,
        persistent_watches: p,
        persistent_recursive_watches: pr,
    })
}

pub fn request() -> impl Strategy<Value = Request> {
    let remove = || (text(), any::<i32>()).prop_map(|(path, watcher_type)| RemoveWatchesRequest { path, watcher_type });
    prop_oneof![
        create().prop_map(Request::Create),
        create().prop_map(Request::Create2),
        create().prop_map(Request::CreateContainer),
        create_ttl().prop_map(Request::CreateTtl),
        versioned().prop_map(Request::Delete),
        watch_request().prop_map(Request::Exists),
        watch_request().prop_map(Request::GetData),
        set_data().prop_map(Request::SetData),
        path_request().prop_map(Request::GetAcl),
        (text(), acl(), any::<i32>()).prop_map(|(path, acl, version)| Request::SetAcl(SetAclRequest {
            path,
            acl,
            version
        })),
        watch_request().prop_map(Request::GetChildren),
        watch_request().prop_map(Request::GetChildren2),
        path_request().prop_map(Request::Sync),
        Just(Request::Ping),
        versioned().prop_map(Request::Check),
        vec(write_op(), 0..4).prop_map(Request::Multi),
        vec(read_op(), 0..4).prop_map(Request::MultiRead),
        (option::of(text()), option::of(text()), option::of(text()), any::<i64>()).prop_map(|(j, l, n, id)| {
            Request::Reconfig(ReconfigRequest {
                joining_servers: j,
                leaving_servers: l,
                new_members: n,
                cur_config_id: id,
            })
        }),
        remove().prop_map(Request::CheckWatches),
        remove().prop_map(Request::RemoveWatches),
        (any::<i32>(), text(), bytes()).prop_map(|(auth_type, scheme, auth)| Request::Auth(AuthPacket {
            auth_type,
            scheme,
            auth
        })),
        set_watches().prop_map(Request::SetWatches),
        bytes().prop_map(|token| Request::Sasl(SaslToken { token })),
        path_request().prop_map(Request::GetEphemerals),
        path_request().prop_map(Request::GetAllChildrenNumber),
        set_watches2().prop_map(Request::SetWatches2),
        (text(), any::<i32>()).prop_map(|(path, mode)| Request::AddWatch(AddWatchRequest { path, mode })),
        Just(Request::CloseSession),
    ]
}

pub fn client_request() -> impl Strategy<Value = ClientRequest> {
    (any::<i32>(), request()).prop_map(|(xid, request)| ClientRequest { xid, request })
}

pub fn error_code() -> impl Strategy<Value = ErrorCode> {
    proptest::sample::select(ErrorCode::ALL.to_vec())
}

pub fn get_data() -> impl Strategy<Value = GetDataResponse> {
    (data(), stat()).prop_map(|(data, stat)| GetDataResponse { data, stat })
}

pub fn multi_result() -> impl Strategy<Value = MultiResult> {
    prop_oneof![
        text().prop_map(|path| MultiResult::Create { path }),
        (text(), stat()).prop_map(|(path, stat)| MultiResult::Create2(Create2Response { path, stat })),
        Just(MultiResult::Delete),
        Just(MultiResult::Check),
        stat().prop_map(|stat| MultiResult::SetData { stat }),
        texts().prop_map(|children| MultiResult::GetChildren { children }),
        get_data().prop_map(MultiResult::GetData),
        error_code().prop_map(MultiResult::Error),
    ]
}

pub fn response() -> impl Strategy<Value = Response> {
    prop_oneof![
        text().prop_map(|path| Response::Create { path }),
        (text(), stat()).prop_map(|(path, stat)| Response::Create2(Create2Response { path, stat })),
        Just(Response::Delete),
        stat().prop_map(|stat| Response::Exists { stat }),
        get_data().prop_map(Response::GetData),
        stat().prop_map(|stat| Response::SetData { stat }),
        (acl(), stat()).prop_map(|(acl, stat)| Response::GetAcl(GetAclResponse { acl, stat })),
        stat().prop_map(|stat| Response::SetAcl { stat }),
        texts().prop_map(|children| Response::GetChildren { children }),
        (texts(), stat()).prop_map(|(children, stat)| Response::GetChildren2(GetChildren2Response { children, stat })),
        text().prop_map(|path| Response::Sync { path }),
        Just(Response::Ping),
        Just(Response::Check),
        vec(multi_result(), 0..4).prop_map(Response::Multi),
        vec(multi_result(), 0..4).prop_map(Response::MultiRead),
        get_data().prop_map(Response::Reconfig),
        Just(Response::CheckWatches),
        Just(Response::RemoveWatches),
        Just(Response::Auth),
        Just(Response::SetWatches),
        bytes().prop_map(|token| Response::Sasl(SaslToken { token })),
        texts().prop_map(|ephemerals| Response::GetEphemerals { ephemerals }),
        any::<i32>().prop_map(|total_number| Response::GetAllChildrenNumber { total_number }),
        Just(Response::AddWatch),
        Just(Response::CloseSession),
    ]
}

/// A reply with an ordinary xid, and the opcode of the request it answers.
pub fn reply() -> impl Strategy<Value = (ServerReply, OpCode)> {
    let result = prop_oneof![
        3 => response().prop_map(Ok),
        1 => error_code().prop_filter("Ok has a body", |c| *c != ErrorCode::Ok).prop_map(Err),
    ];
    (
        0..i32::MAX,
        any::<i64>(),
        result,
        proptest::sample::select(OpCode::ALL.to_vec()),
    )
        .prop_map(|(xid, zxid, result, any_op)| {
            let op = result.as_ref().map_or(any_op, Response::opcode);
            (ServerReply { xid, zxid, result }, op)
        })
}

pub fn event() -> impl Strategy<Value = WatcherEvent> {
    (
        proptest::sample::select(EventType::ALL),
        proptest::sample::select(KeeperState::ALL),
        text(),
    )
        .prop_map(|(event_type, state, path)| WatcherEvent {
            event_type,
            state,
            path,
        })
}

pub fn connect_request() -> impl Strategy<Value = ConnectRequest> {
    (
        any::<i32>(),
        any::<i64>(),
        any::<i32>(),
        any::<i64>(),
        bytes(),
        option::of(any::<bool>()),
    )
        .prop_map(
            |(protocol_version, last_zxid_seen, time_out, session_id, passwd, read_only)| ConnectRequest {
                protocol_version,
                last_zxid_seen,
                time_out,
                session_id,
                passwd,
                read_only,
            },
        )
}

pub fn connect_response() -> impl Strategy<Value = ConnectResponse> {
    (
        any::<i32>(),
        any::<i32>(),
        any::<i64>(),
        bytes(),
        option::of(any::<bool>()),
    )
        .prop_map(
            |(protocol_version, time_out, session_id, passwd, read_only)| ConnectResponse {
                protocol_version,
                time_out,
                session_id,
                passwd,
                read_only,
            },
        )
}
