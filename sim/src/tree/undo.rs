//! Rolling back a multi that failed part-way (`apply_multi`): each change
//! the multi made is journaled with what undoes it, and undone newest
//! first. Cheaper than keeping a copy of the whole tree: after a copy, the
//! persistent maps copy every node the multi touches (and a parent's whole
//! child set), and most multis succeed.

use zkdst_recipes::zk::Zxid;

use super::data_tree::DataTree;
use super::node::Node;

/// What undoes one change.
#[derive(Debug)]
pub(crate) enum Undo {
    /// Put back the node that was at the path (`None`: there was none).
    Node(String, Option<Node>),
    /// A child was linked: remove it and restore the parent's counters.
    Linked {
        parent: String,
        name: String,
        cversion: i32,
        pzxid: Zxid,
    },
    /// A child was unlinked: put it back and restore the parent's pzxid.
    Unlinked { parent: String, name: String, pzxid: Zxid },
}

/// The changes of the multi being applied; off outside multis, where a
/// failed op has changed nothing.
#[derive(Debug, Default)]
pub(crate) struct Journal(Option<Vec<Undo>>);

impl Journal {
    pub fn on() -> Journal {
        Journal(Some(Vec::new()))
    }

    pub fn off() -> Journal {
        Journal(None)
    }

    /// Journals the undo `f` makes, if on (so that plain writes build none).
    pub fn record(&mut self, f: impl FnOnce() -> Undo) {
        if let Some(v) = &mut self.0 {
            v.push(f());
        }
    }

    /// Undoes every journaled change, newest first.
    pub fn roll_back(self, tree: &mut DataTree) {
        for undo in self.0.into_iter().flatten().rev() {
            match undo {
                Undo::Node(path, Some(node)) => {
                    tree.put_node(&path, node);
                }
                Undo::Node(path, None) => {
                    tree.remove_node(&path);
                }
                Undo::Linked {
                    parent,
                    name,
                    cversion,
                    pzxid,
                } => {
                    tree.update_node(&parent, |p| {
                        p.children.remove(&name);
                        p.cversion = cversion;
                        p.pzxid = pzxid;
                    });
                }
                Undo::Unlinked { parent, name, pzxid } => {
                    tree.update_node(&parent, |p| {
                        p.children.insert(name);
                        p.pzxid = pzxid;
                    });
                }
            }
        }
    }
}
