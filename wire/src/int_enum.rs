//! Enums carried as jute ints (`OpCode`, the watcher enums; the error
//! codes are `zkdst_model::ErrorCode`): one declaration gives the variants, their wire values,
//! `ALL`, and both directions of the mapping as `match`es — one source of
//! truth, and no table scan on the encode path.

/// `int_enum!(/// doc  Name { Variant = value, ... })`. Unknown integers
/// map to `None`; the decoders turn that into a [`crate::WireError`].
macro_rules! int_enum {
    ($(#[$m:meta])* $name:ident { $( $(#[$vm:meta])* $variant:ident = $value:expr ),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $( $(#[$vm])* $variant ),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_i32(self) -> i32 {
                match self { $($name::$variant => $value),+ }
            }

            pub fn from_i32(value: i32) -> Option<Self> {
                match value { $(v if v == $value => Some($name::$variant),)+ _ => None }
            }
        }
    };
}

pub(crate) use int_enum;
