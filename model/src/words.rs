//! `words!`: an enum whose variants are written as words (in scenario
//! files, stats, histories, the command line) — one declaration gives the
//! variants, `ALL`, `name()`, `from_name()`, `Display`, and serde as those
//! words, so a name is never made by a serialization round-trip and never
//! kept in a second list.

/// ```
/// zkdst_model::words! {
///     /// A colour.
///     pub enum Colour { Red = "red", DarkBlue = "dark-blue" | "navy" }
/// }
/// assert_eq!(Colour::DarkBlue.name(), "dark-blue");
/// assert_eq!(Colour::from_name("navy"), Some(Colour::DarkBlue));
/// ```
/// Words after `|` are also read (older names), never written.
#[macro_export]
macro_rules! words {
    ($(#[$m:meta])* $vis:vis enum $name:ident {
        $( $(#[$vm:meta])* $variant:ident = $word:literal $(| $alias:literal)* ),+ $(,)?
    }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        $vis enum $name { $( $(#[$vm])* $variant ),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The words written, in declaration order.
            pub const WORDS: &'static [&'static str] = &[$($word),+];

            pub const fn name(self) -> &'static str {
                match self { $($name::$variant => $word),+ }
            }

            pub fn from_name(word: &str) -> Option<$name> {
                match word { $($word $(| $alias)* => Some($name::$variant),)+ _ => None }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = String;
            fn from_str(word: &str) -> Result<$name, String> {
                $name::from_name(word).ok_or_else(|| {
                    format!("unknown {} {word:?}, expected one of: {}", stringify!($name), $name::WORDS.join(", "))
                })
            }
        }

        impl $crate::__serde::Serialize for $name {
            fn serialize<S: $crate::__serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> $crate::__serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__serde::Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                let word = <::std::borrow::Cow<'de, str> as $crate::__serde::Deserialize>::deserialize(d)?;
                $name::from_name(&word)
                    .ok_or_else(|| <D::Error as $crate::__serde::de::Error>::unknown_variant(&word, $name::WORDS))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    crate::words! {
        enum Colour { Red = "red", DarkBlue = "dark-blue" | "navy" }
    }

    #[test]
    fn words_are_written_read_and_refused() {
        assert_eq!(serde_json::to_string(&Colour::DarkBlue).unwrap(), "\"dark-blue\"");
        assert_eq!(serde_json::from_str::<Colour>("\"navy\"").unwrap(), Colour::DarkBlue);
        let err = serde_json::from_str::<Colour>("\"green\"").unwrap_err().to_string();
        assert!(
            err.contains("green") && err.contains("red") && err.contains("dark-blue"),
            "{err}"
        );
        assert_eq!(Colour::ALL, &[Colour::Red, Colour::DarkBlue]);
        assert_eq!("red".parse::<Colour>(), Ok(Colour::Red));
        assert!("navyy".parse::<Colour>().unwrap_err().contains("dark-blue"));
    }
}
