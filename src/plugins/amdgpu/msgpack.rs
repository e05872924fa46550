//! A small MessagePack reader: just what the AMDGPU code-object metadata
//! note (`NT_AMDGPU_METADATA`) needs — maps, arrays, strings, integers,
//! booleans and nil; floats, binary and extension values are read and kept
//! opaque.
//!
//! Pure function over untrusted bytes: every length is bounds-checked before
//! it is used, nesting is limited, and malformed input is an error naming the
//! offset, never a panic.

use std::fmt;

/// A decoded value. Map keys keep their order (the metadata is small).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Nil,
    Bool(bool),
    /// Any integer that fits in i128 (all msgpack integers do).
    Int(i128),
    Float(f64),
    Str(String),
    /// Binary or extension payloads (contents not needed here).
    Opaque,
    Array(Vec<Value>),
    Map(Vec<(Value, Value)>),
}

impl Value {
    /// The value of string key `key` in a map.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries.iter().find(|(k, _)| matches!(k, Value::Str(s) if s == key)).map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Int(i) => u64::try_from(*i).ok(),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// Why decoding stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub offset: usize,
    pub what: &'static str,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "msgpack: {} at byte {}", self.what, self.offset)
    }
}

/// Deepest nesting accepted (the metadata uses 4 levels).
const MAX_DEPTH: usize = 32;

/// Decodes one value from the start of `bytes`; trailing bytes are ignored
/// (the note descriptor is padded to 4 bytes).
pub fn decode(bytes: &[u8]) -> Result<Value, DecodeError> {
    let mut r = Reader { b: bytes, pos: 0 };
    r.value(0)
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn err(&self, what: &'static str) -> DecodeError {
        DecodeError { offset: self.pos, what }
    }

    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.b.len()).ok_or_else(|| self.err("truncated"))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn uint(&mut self, n: usize) -> Result<u64, DecodeError> {
        Ok(self.take(n)?.iter().fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
    }

    fn sint(&mut self, n: usize) -> Result<i64, DecodeError> {
        let raw = self.uint(n)?;
        let shift = 64 - 8 * n as u32;
        Ok(((raw << shift) as i64) >> shift)
    }

    fn string(&mut self, len: usize) -> Result<Value, DecodeError> {
        let at = self.pos;
        let raw = self.take(len)?;
        match std::str::from_utf8(raw) {
            Ok(s) => Ok(Value::Str(s.to_string())),
            Err(_) => Err(DecodeError { offset: at, what: "string is not UTF-8" }),
        }
    }

    fn array(&mut self, len: usize, depth: usize) -> Result<Value, DecodeError> {
        // Each element takes at least one byte: a length past the end is malformed.
        if len > self.b.len() - self.pos {
            return Err(self.err("array longer than the input"));
        }
        let mut v = Vec::with_capacity(len);
        for _ in 0..len {
            v.push(self.value(depth + 1)?);
        }
        Ok(Value::Array(v))
    }

    fn map(&mut self, len: usize, depth: usize) -> Result<Value, DecodeError> {
        if len > (self.b.len() - self.pos) / 2 {
            return Err(self.err("map longer than the input"));
        }
        let mut v = Vec::with_capacity(len);
        for _ in 0..len {
            let k = self.value(depth + 1)?;
            let x = self.value(depth + 1)?;
            v.push((k, x));
        }
        Ok(Value::Map(v))
    }

    fn value(&mut self, depth: usize) -> Result<Value, DecodeError> {
        if depth > MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        let tag = self.take(1)?[0];
        match tag {
            0x00..=0x7f => Ok(Value::Int(i128::from(tag))),
            0x80..=0x8f => self.map(usize::from(tag & 0x0f), depth),
            0x90..=0x9f => self.array(usize::from(tag & 0x0f), depth),
            0xa0..=0xbf => self.string(usize::from(tag & 0x1f)),
            0xc0 => Ok(Value::Nil),
            0xc1 => Err(DecodeError { offset: self.pos - 1, what: "reserved tag 0xc1" }),
            0xc2 => Ok(Value::Bool(false)),
            0xc3 => Ok(Value::Bool(true)),
            0xc4..=0xc6 => {
                let n = self.uint(1 << (tag - 0xc4))? as usize;
                self.take(n)?;
                Ok(Value::Opaque)
            }
            0xc7..=0xc9 => {
                let n = self.uint(1 << (tag - 0xc7))? as usize;
                self.take(1)?; // type
                self.take(n)?;
                Ok(Value::Opaque)
            }
            0xca => Ok(Value::Float(f64::from(f32::from_bits(self.uint(4)? as u32)))),
            0xcb => Ok(Value::Float(f64::from_bits(self.uint(8)?))),
            0xcc..=0xcf => Ok(Value::Int(i128::from(self.uint(1 << (tag - 0xcc))?))),
            0xd0..=0xd3 => Ok(Value::Int(i128::from(self.sint(1 << (tag - 0xd0))?))),
            0xd4..=0xd8 => {
                self.take(1)?; // type
                self.take(1 << (tag - 0xd4))?;
                Ok(Value::Opaque)
            }
            0xd9..=0xdb => {
                let n = self.uint(1 << (tag - 0xd9))? as usize;
                self.string(n)
            }
            0xdc | 0xdd => {
                let n = self.uint(if tag == 0xdc { 2 } else { 4 })? as usize;
                self.array(n, depth)
            }
            0xde | 0xdf => {
                let n = self.uint(if tag == 0xde { 2 } else { 4 })? as usize;
                self.map(n, depth)
            }
            0xe0..=0xff => Ok(Value::Int(i128::from(tag as i8))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars() {
        assert_eq!(decode(&[0x05]).unwrap(), Value::Int(5));
        assert_eq!(decode(&[0xff]).unwrap(), Value::Int(-1));
        assert_eq!(decode(&[0xcd, 0x01, 0x28]).unwrap(), Value::Int(296));
        assert_eq!(decode(&[0xce, 0xff, 0xff, 0xff, 0xff]).unwrap(), Value::Int(0xffff_ffff));
        assert_eq!(decode(&[0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).unwrap(), Value::Int(u64::MAX as i128));
        assert_eq!(decode(&[0xd0, 0x80]).unwrap(), Value::Int(-128));
        assert_eq!(decode(&[0xd1, 0xff, 0xfe]).unwrap(), Value::Int(-2));
        assert_eq!(decode(&[0xc2]).unwrap(), Value::Bool(false));
        assert_eq!(decode(&[0xc3]).unwrap(), Value::Bool(true));
        assert_eq!(decode(&[0xc0]).unwrap(), Value::Nil);
        assert_eq!(decode(&[0xa3, b'a', b'b', b'c']).unwrap(), Value::Str("abc".into()));
        assert_eq!(decode(&[0xd9, 2, b'h', b'i']).unwrap(), Value::Str("hi".into()));
        assert_eq!(decode(&[0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0]).unwrap(), Value::Float(1.0));
        assert_eq!(decode(&[0xc4, 2, 1, 2]).unwrap(), Value::Opaque);
        assert_eq!(decode(&[0xd5, 1, 0, 0]).unwrap(), Value::Opaque);
    }

    #[test]
    fn containers() {
        // {"a": [1, true], "b": {"c": "d"}}
        let b = [0x82, 0xa1, b'a', 0x92, 0x01, 0xc3, 0xa1, b'b', 0x81, 0xa1, b'c', 0xa1, b'd'];
        let v = decode(&b).unwrap();
        assert_eq!(v.get("a").unwrap().as_array().unwrap().len(), 2);
        assert_eq!(v.get("b").and_then(|m| m.get("c")).and_then(Value::as_str), Some("d"));
        assert_eq!(v.get("zz"), None);
        let long = [0xdc, 0x00, 0x02, 0x01, 0x02];
        assert_eq!(decode(&long).unwrap(), Value::Array(vec![Value::Int(1), Value::Int(2)]));
    }

    #[test]
    fn malformed_input_is_an_error() {
        assert!(decode(&[]).is_err());
        assert!(decode(&[0xc1]).is_err());
        assert!(decode(&[0xa5, b'a']).is_err());
        assert!(decode(&[0xdd, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(decode(&[0xdf, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(decode(&[0xa2, 0xff, 0xfe]).is_err());
        let deep = vec![0x91u8; 100];
        assert_eq!(decode(&deep).unwrap_err().what, "nested too deeply");
    }

    #[test]
    fn garbage_never_panics() {
        let b = [0x82, 0xa1, b'a', 0x92, 0x01, 0xc3, 0xa1, b'b', 0x81, 0xa1, b'c', 0xcd, 0x01, 0x28];
        for n in 0..b.len() {
            let _ = decode(&b[..n]);
        }
        for i in 0..b.len() * 8 {
            let mut c = b;
            c[i / 8] ^= 1 << (i % 8);
            let _ = decode(&c);
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            let bytes: Vec<u8> = (0..24)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let _ = decode(&bytes);
        }
    }
}
