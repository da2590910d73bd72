//! Error codes carried in `ReplyHeader.err` and multi results: ZooKeeper
//! 3.8's `KeeperException.Code`, defined once in `zkdst-model`.

pub use zkdst_model::ErrorCode;
