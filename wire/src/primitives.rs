//! Jute's binary primitives (`org.apache.jute.BinaryInputArchive` /
//! `BinaryOutputArchive`): big-endian `int` and `long`, one-byte `boolean`,
//! and length-prefixed `buffer`, `ustring` and `vector`.
//!
//! Reading is defensive: every length is checked against what is left of the
//! input and against jute's field bound *before* anything is allocated, so a
//! hostile length costs nothing. Choices where jute is loose:
//! - `boolean`: like Java's `DataInput.readBoolean`, any non-zero byte is true.
//! - `ustring`: invalid UTF-8 is replaced by U+FFFD, as Java's
//!   `new String(bytes, UTF_8)` does; the server then sees the same path Java
//!   would.
//! - null (`-1`) `ustring` and `vector` read as empty. No 3.8 client sends
//!   them in these records and the server rejects a null path exactly as an
//!   empty one (`BadArguments`); where null carries meaning (reconfig's
//!   server lists) the record uses [`Reader::opt_string`].
//! - null `buffer` is kept (`Option<Vec<u8>>`) for znode data, which ZooKeeper
//!   stores and returns as null; other buffers (passwords, auth, SASL tokens)
//!   read null as empty.

use crate::error::WireError;

/// Jute's field bound: `jute.maxbuffer` (default 0xfffff) plus the 1024-byte
/// slack `BinaryInputArchive.checkLength` has always allowed on top of it.
pub const DEFAULT_MAX_FIELD: usize = crate::frame::DEFAULT_MAX_BUFFER + 1024;

/// A cursor over one frame payload that knows its offset for error reports.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    max_field: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Self::with_max_field(buf, DEFAULT_MAX_FIELD)
    }

    pub fn with_max_field(buf: &'a [u8], max_field: usize) -> Self {
        Reader { buf, pos: 0, max_field }
    }

    /// Offset of the next byte inside the payload.
    pub fn offset(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], WireError> {
        if n > self.remaining() {
            return Err(WireError::Truncated {
                what,
                offset: self.pos,
                needed: n,
                available: self.remaining(),
            });
        }
        let bytes = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], WireError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub fn i32(&mut self, what: &'static str) -> Result<i32, WireError> {
        self.array(what).map(i32::from_be_bytes)
    }

    pub fn i64(&mut self, what: &'static str) -> Result<i64, WireError> {
        self.array(what).map(i64::from_be_bytes)
    }

    pub fn bool(&mut self, what: &'static str) -> Result<bool, WireError> {
        self.array::<1>(what).map(|[b]| b != 0)
    }

    /// Reads a length prefix: `None` for jute's null (-1), otherwise a length
    /// that fits in both the remaining input (each item at least `min_item`
    /// bytes) and the field bound.
    fn length(&mut self, what: &'static str, min_item: usize) -> Result<Option<usize>, WireError> {
        let offset = self.pos;
        let len = self.i32(what)?;
        if len == -1 {
            return Ok(None);
        }
        let limit = (self.remaining() / min_item.max(1)).min(self.max_field);
        match usize::try_from(len) {
            Ok(n) if n <= limit => Ok(Some(n)),
            _ => Err(WireError::BadLength {
                what,
                offset,
                len,
                limit,
            }),
        }
    }

    /// A `buffer`, keeping jute's null apart from empty.
    pub fn opt_buffer(&mut self, what: &'static str) -> Result<Option<Vec<u8>>, WireError> {
        match self.length(what, 1)? {
            None => Ok(None),
            Some(n) => Ok(Some(self.take(n, what)?.to_vec())),
        }
    }

    /// A `buffer` where null means nothing more than empty.
    pub fn buffer(&mut self, what: &'static str) -> Result<Vec<u8>, WireError> {
        Ok(self.opt_buffer(what)?.unwrap_or_default())
    }

    /// A `ustring`, keeping jute's null apart from empty.
    pub fn opt_string(&mut self, what: &'static str) -> Result<Option<String>, WireError> {
        match self.length(what, 1)? {
            None => Ok(None),
            Some(n) => Ok(Some(String::from_utf8_lossy(self.take(n, what)?).into_owned())),
        }
    }

    /// A `ustring`; null reads as empty (see the module doc).
    pub fn string(&mut self, what: &'static str) -> Result<String, WireError> {
        Ok(self.opt_string(what)?.unwrap_or_default())
    }

    /// A `vector<T>`; null reads as empty. The count is bounded by the
    /// remaining input divided by the smallest encoding of `T`.
    pub fn vector<T: Record>(&mut self, what: &'static str) -> Result<Vec<T>, WireError> {
        let Some(n) = self.length(what, T::MIN_SIZE)? else {
            return Ok(Vec::new());
        };
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(T::read(self)?);
        }
        Ok(items)
    }
}

/// Appends jute primitives to a growing buffer.
#[derive(Debug, Default, Clone)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    pub fn new() -> Self {
        Self::default()
    }

    /// A writer that starts with a 4-byte placeholder for the frame length,
    /// filled in by [`Writer::finish_frame`].
    pub fn frame() -> Self {
        Writer { buf: vec![0; 4] }
    }

    /// Fills in the length placeholder and returns the whole frame.
    pub fn finish_frame(mut self) -> Vec<u8> {
        let len = i32::try_from(self.buf.len() - 4).unwrap_or(i32::MAX);
        self.buf[..4].copy_from_slice(&len.to_be_bytes());
        self.buf
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub fn bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }

    fn len(&mut self, n: usize) {
        // Lengths beyond i32 cannot be framed anyway; the frame check refuses them.
        self.i32(i32::try_from(n).unwrap_or(i32::MAX));
    }

    pub fn bytes(&mut self, v: &[u8]) {
        self.len(v.len());
        self.buf.extend_from_slice(v);
    }

    pub fn opt_bytes(&mut self, v: Option<&[u8]>) {
        match v {
            None => self.i32(-1),
            Some(v) => self.bytes(v),
        }
    }

    pub fn string(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }

    pub fn opt_string(&mut self, v: Option<&str>) {
        self.opt_bytes(v.map(str::as_bytes));
    }

    pub fn vector<T: Record>(&mut self, items: &[T]) {
        self.len(items.len());
        for item in items {
            item.write(self);
        }
    }
}

/// A jute record: a fixed sequence of fields, no tag, no length of its own.
pub trait Record: Sized {
    /// The fewest bytes any value encodes to; bounds vector counts.
    const MIN_SIZE: usize;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError>;
    fn write(&self, w: &mut Writer);

    /// Encodes without a frame length (for tests and nested use).
    fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new();
        self.write(&mut w);
        w.into_bytes()
    }
}

/// `vector<ustring>` elements.
impl Record for String {
    const MIN_SIZE: usize = 4;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        r.string("ustring")
    }
    fn write(&self, w: &mut Writer) {
        w.string(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_bounded_before_allocating() {
        // A vector claiming i32::MAX strings in 4 bytes of input.
        let mut r = Reader::new(&[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        let err = r.vector::<String>("v").unwrap_err();
        assert_eq!(
            err,
            WireError::BadLength {
                what: "v",
                offset: 0,
                len: i32::MAX,
                limit: 1
            }
        );
        // -2 is not null.
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xfe]);
        assert!(matches!(r.opt_buffer("b"), Err(WireError::BadLength { len: -2, .. })));
        // -1 is null.
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff]);
        assert_eq!(r.opt_buffer("b"), Ok(None));
    }

    #[test]
    fn field_bound_applies_even_with_enough_input() {
        let mut bytes = 10i32.to_be_bytes().to_vec();
        bytes.extend_from_slice(&[b'a'; 10]);
        let mut r = Reader::with_max_field(&bytes, 9);
        assert!(matches!(r.buffer("b"), Err(WireError::BadLength { limit: 9, .. })));
    }

    #[test]
    fn booleans_and_strings_read_like_java() {
        let mut r = Reader::new(&[7, 0, 0, 0, 2, 0xff, b'a']);
        assert!(r.bool("b").unwrap());
        assert_eq!(r.string("s").unwrap(), "\u{fffd}a");
        assert!(r.is_empty());
    }
}
