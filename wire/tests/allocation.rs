//! No untrusted length is allocated without a bound: while decoding hostile
//! payloads of at most 1 KiB, no single allocation exceeds 64 KiB, even
//! though every length prefix could claim 2 GiB.
//!
//! A counting global allocator records the largest request; this file holds
//! one test so no other test's allocations are counted.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use common::config;
use proptest::prelude::*;
use zkdst_wire::*;

struct Largest;

static LARGEST: AtomicUsize = AtomicUsize::new(0);
static COUNTING: AtomicBool = AtomicBool::new(false);

unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            LARGEST.fetch_max(new_size, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Largest = Largest;

/// A body made of big length prefixes, small valid ones and little else.
fn hostile() -> impl Strategy<Value = Vec<u8>> {
    let word = prop_oneof![
        Just(i32::MAX.to_be_bytes().to_vec()),
        Just(0x000f_ffffi32.to_be_bytes().to_vec()),
        Just(0x0001_0000i32.to_be_bytes().to_vec()),
        Just(0i32.to_be_bytes().to_vec()),
        Just(1i32.to_be_bytes().to_vec()),
        Just(vec![0]),
        proptest::collection::vec(any::<u8>(), 0..8),
    ];
    proptest::collection::vec(word, 0..64).prop_map(|w| w.concat().into_iter().take(1000).collect())
}

proptest! {
    #![proptest_config(config(5))]
    #[test]
    fn hostile_lengths_allocate_little(body in hostile(), op in proptest::sample::select(OpCode::ALL.to_vec())) {
        // Valid headers, so that decoding reaches the hostile body.
        let request = [&7i32.to_be_bytes()[..], &op.as_i32().to_be_bytes(), &body].concat();
        let reply = [&7i32.to_be_bytes()[..], &0i64.to_be_bytes(), &0i32.to_be_bytes(), &body].concat();
        LARGEST.store(0, Ordering::Relaxed);
        COUNTING.store(true, Ordering::Relaxed);
        let results = (
            decode_request(&request).is_ok(),
            decode_connect_request(&body).is_ok(),
            decode_server_message(&reply, |_| Some(op)).is_ok(),
        );
        COUNTING.store(false, Ordering::Relaxed);
        let largest = LARGEST.load(Ordering::Relaxed);
        prop_assert!(largest <= 64 * 1024, "an allocation of {largest} bytes for a {}-byte body", body.len());
        let _ = results;
    }
}
