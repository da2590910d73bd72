//! A znode's child names. Most znodes are leaves, and an empty `im::OrdSet`
//! still allocates a B-tree root of ~2 kB, so the set is created on the
//! first insert.

use im::OrdSet;

/// Child names (not paths), sorted.
#[derive(Debug, Clone, Default)]
pub(crate) struct Children(Option<OrdSet<String>>);

impl Children {
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, OrdSet::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = &String> {
        self.0.iter().flat_map(|s| s.iter())
    }

    pub fn insert(&mut self, name: String) -> Option<String> {
        self.0.get_or_insert_with(OrdSet::new).insert(name)
    }

    pub fn remove(&mut self, name: &str) -> Option<String> {
        self.0.as_mut()?.remove(name)
    }
}

impl PartialEq for Children {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Children {}
