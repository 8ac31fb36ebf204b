//! Bounds-checked little-endian and LEB128 varint primitives.
//!
//! [`ByteReader`] never panics and never allocates more than the bytes it has left, so
//! no input can crash a reader or make it exhaust memory.

/// Appends encoded values to a byte vector.
#[derive(Default, Debug)]
pub struct ByteWriter {
    /// The encoded bytes.
    pub buf: Vec<u8>,
}

impl ByteWriter {
    /// Unsigned LEB128.
    #[inline]
    pub fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }
    /// Signed value, zigzag then LEB128.
    #[inline]
    pub fn svarint(&mut self, v: i64) {
        self.varint(((v << 1) ^ (v >> 63)) as u64);
    }
    /// One byte.
    #[inline]
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    /// Length-prefixed bytes.
    pub fn bytes(&mut self, b: &[u8]) {
        self.varint(b.len() as u64);
        self.buf.extend_from_slice(b);
    }
    /// Length-prefixed UTF-8.
    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
}

/// Why a [`ByteReader`] read failed; the caller adds the file offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFail {
    /// Ran out of bytes.
    Eof,
    /// A varint longer than 10 bytes or overflowing 64 bits.
    BadVarint,
    /// A string that is not UTF-8.
    BadUtf8,
}

impl ReadFail {
    /// Human-readable reason.
    pub fn text(self) -> &'static str {
        match self {
            ReadFail::Eof => "record runs past the end of its block",
            ReadFail::BadVarint => "malformed varint",
            ReadFail::BadUtf8 => "string is not valid UTF-8",
        }
    }
}

/// A varint of any length at `data[pos..]`: its value and the position after it.
#[inline(never)]
fn varint_slow(data: &[u8], mut pos: usize) -> Result<(u64, usize), ReadFail> {
    let mut v: u64 = 0;
    let mut shift = 0u32;
    loop {
        let b = *data.get(pos).ok_or(ReadFail::Eof)?;
        pos += 1;
        if shift == 63 && b > 1 {
            return Err(ReadFail::BadVarint);
        }
        v |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            return Ok((v, pos));
        }
        shift += 7;
        if shift > 63 {
            return Err(ReadFail::BadVarint);
        }
    }
}

/// Reads encoded values from a slice.
#[derive(Debug, Clone)]
pub struct ByteReader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> ByteReader<'a> {
    /// Read from the start of `data`.
    #[inline]
    pub fn new(data: &'a [u8]) -> Self {
        ByteReader { data, pos: 0 }
    }
    /// Position from the start of the slice.
    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }
    /// Bytes left.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }
    /// True when everything has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }
    /// One byte.
    #[inline]
    pub fn u8(&mut self) -> Result<u8, ReadFail> {
        let b = *self.data.get(self.pos).ok_or(ReadFail::Eof)?;
        self.pos += 1;
        Ok(b)
    }
    /// Read from `data` starting at byte `pos`.
    #[inline]
    pub fn at(data: &'a [u8], pos: usize) -> Self {
        ByteReader {
            data,
            pos: pos.min(data.len()),
        }
    }
    /// Unsigned LEB128.
    #[inline]
    pub fn varint(&mut self) -> Result<u64, ReadFail> {
        // Fast paths: one and two bytes (small deltas, ids and counts).
        if let Some(&b0) = self.data.get(self.pos) {
            if b0 < 0x80 {
                self.pos += 1;
                return Ok(b0 as u64);
            }
            if let Some(&b1) = self.data.get(self.pos + 1)
                && b1 < 0x80
            {
                self.pos += 2;
                return Ok((b0 & 0x7f) as u64 | (b1 as u64) << 7);
            }
        }
        // The slow path gets the position by value, so the reader of a hot loop stays
        // in registers instead of having its address taken.
        let (v, pos) = varint_slow(self.data, self.pos)?;
        self.pos = pos;
        Ok(v)
    }
    /// A varint that must fit in 32 bits.
    #[inline]
    pub fn varint_u32(&mut self) -> Result<u32, ReadFail> {
        u32::try_from(self.varint()?).map_err(|_| ReadFail::BadVarint)
    }
    /// A varint that must fit in 16 bits.
    pub fn varint_u16(&mut self) -> Result<u16, ReadFail> {
        u16::try_from(self.varint()?).map_err(|_| ReadFail::BadVarint)
    }
    /// Zigzag signed varint.
    #[inline]
    pub fn svarint(&mut self) -> Result<i64, ReadFail> {
        let u = self.varint()?;
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }
    /// `n` raw bytes.
    #[inline]
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], ReadFail> {
        if n > self.remaining() {
            return Err(ReadFail::Eof);
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    /// Length-prefixed bytes; the length is checked against what is left before any
    /// allocation happens.
    #[inline]
    pub fn bytes(&mut self) -> Result<&'a [u8], ReadFail> {
        let n = self.varint()?;
        let n = usize::try_from(n).map_err(|_| ReadFail::Eof)?;
        self.take(n)
    }
    /// Length-prefixed UTF-8.
    pub fn str(&mut self) -> Result<&'a str, ReadFail> {
        std::str::from_utf8(self.bytes()?).map_err(|_| ReadFail::BadUtf8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip_edges() {
        for v in [0u64, 1, 127, 128, 16383, 16384, u32::MAX as u64, u64::MAX] {
            let mut w = ByteWriter::default();
            w.varint(v);
            assert_eq!(ByteReader::new(&w.buf).varint(), Ok(v));
        }
        for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
            let mut w = ByteWriter::default();
            w.svarint(v);
            assert_eq!(ByteReader::new(&w.buf).svarint(), Ok(v));
        }
    }

    #[test]
    fn overlong_varint_is_rejected() {
        let bytes = [0xffu8; 11];
        assert_eq!(ByteReader::new(&bytes).varint(), Err(ReadFail::BadVarint));
        assert_eq!(ByteReader::new(&[0x80]).varint(), Err(ReadFail::Eof));
    }

    #[test]
    fn huge_length_prefix_does_not_allocate() {
        let mut w = ByteWriter::default();
        w.varint(u64::MAX / 2);
        assert_eq!(ByteReader::new(&w.buf).bytes(), Err(ReadFail::Eof));
    }
}
