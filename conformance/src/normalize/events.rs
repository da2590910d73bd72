//! Each client's watch events in the order it received them.

use std::collections::BTreeMap;

use zkdst_recipes::zk::WatchedEvent;

use crate::exec::{Trace, WatchKind};

/// Each client's one-shot watch events in the order it received them, as
/// `(client, events)` for every client that received any.
///
/// Persistent watches are left out: each one's own event list is compared
/// watch by watch, but how its events interleave with other watches' is not
/// observable through `RealClient`, which forwards every watch through its
/// own task (a persistent watch's task may deliver two queued events before
/// the one-shot watches' task delivers the first one's twin). A session's
/// one-shot watches are forwarded by one task that polls them in the order
/// the client library woke them, so their order is the client's.
///
/// The events one reconnect delivered (a [`Trace::bursts`] entry: the
/// server's SetWatches verdicts) are sorted by (path, event type): the
/// server answers the client's lists in the order the client sent them,
/// and each client library sends its watch table in its own order (a hash
/// map's in both the Java client and `zookeeper-client`), so that order
/// says nothing about ZooKeeper. Which events the burst holds is compared.
pub fn event_sequences(trace: &Trace) -> Vec<(usize, Vec<WatchedEvent>)> {
    type Burst = (usize, usize, Vec<WatchedEvent>);
    fn flush(by_client: &mut BTreeMap<usize, Vec<WatchedEvent>>, b: Option<Burst>) {
        if let Some((client, _, mut events)) = b {
            events.sort_by_key(|e| (e.path.clone(), e.event_type.code()));
            by_client.entry(client).or_default().extend(events);
        }
    }
    let mut by_client: BTreeMap<usize, Vec<WatchedEvent>> = BTreeMap::new();
    let mut taken = vec![0usize; trace.watches.len()];
    let mut burst: Option<Burst> = None;
    for (k, &i) in trace.deliveries.iter().enumerate() {
        if burst.as_ref().is_some_and(|(_, to, _)| k >= *to) {
            flush(&mut by_client, burst.take());
        }
        if burst.is_none() {
            if let Some(&(client, _, to)) = trace.bursts.iter().find(|(_, from, to)| *from <= k && k < *to) {
                burst = Some((client, to, Vec::new()));
            }
        }
        let Some(w) = trace.watches.get(i) else { continue };
        let event = w.events.get(taken[i]).cloned();
        taken[i] += 1;
        if matches!(w.kind, WatchKind::Persistent | WatchKind::PersistentRecursive) {
            continue;
        }
        let Some(e) = event else { continue };
        match &mut burst {
            Some((client, _, events)) if *client == w.client => events.push(e),
            _ => by_client.entry(w.client).or_default().push(e),
        }
    }
    flush(&mut by_client, burst.take());
    by_client.into_iter().collect()
}
