//! async-select's `select!` without the unbiased mode.
//!
//! The original picks the first branch to poll from the address of the
//! select's futures (`(&futures as *const _ as usize) >> 3`), which differs
//! between runs of the same seed: a simulation would not replay. Here every
//! `select!` polls its branches in the order written, as `biased;` does.
//! Select-heavy code keeps its meaning: it must not rely on fairness, and
//! zookeeper-client does not.

#[macro_export]
macro_rules! select {
    (biased; $($token:tt)*) => {
        $crate::select_biased! { $($token)* }
    };
    ($($token:tt)*) => {
        $crate::select_biased! { $($token)* }
    };
}

#[doc(hidden)]
pub use async_select_proc_macros::select_biased;
#[doc(hidden)]
pub use async_select_proc_macros::select_default;
