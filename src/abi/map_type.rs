//! Map-type bits (`int64_t ArgTypes[i]`), abi-reference §6.1.

use core::fmt;

/// The map-type word of one argument. A newtype, not an enum: any bit pattern
/// may arrive from C.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct MapType(pub u64);

impl MapType {
    pub const NONE: u64 = 0x0;
    pub const TO: u64 = 0x1;
    pub const FROM: u64 = 0x2;
    pub const ALWAYS: u64 = 0x4;
    pub const DELETE: u64 = 0x8;
    pub const PTR_AND_OBJ: u64 = 0x10;
    pub const TARGET_PARAM: u64 = 0x20;
    pub const RETURN_PARAM: u64 = 0x40;
    pub const PRIVATE: u64 = 0x80;
    pub const LITERAL: u64 = 0x100;
    pub const IMPLICIT: u64 = 0x200;
    pub const CLOSE: u64 = 0x400;
    pub const PRESENT: u64 = 0x1000;
    pub const OMPX_HOLD: u64 = 0x2000;
    pub const ATTACH: u64 = 0x4000;
    pub const NON_CONTIG: u64 = 0x1000_0000_0000;
    pub const MEMBER_OF: u64 = 0xffff_0000_0000_0000;

    /// True when every bit of `bits` is set.
    #[inline]
    pub fn has(self, bits: u64) -> bool {
        self.0 & bits == bits
    }
    /// True when any bit of `bits` is set.
    #[inline]
    pub fn any(self, bits: u64) -> bool {
        self.0 & bits != 0
    }
    /// Index of the parent entry for a `MEMBER_OF` entry.
    #[inline]
    pub fn member_of(self) -> Option<usize> {
        let field = (self.0 >> 48) & 0xffff;
        if field == 0 { None } else { Some(field as usize - 1) }
    }
    /// The word encoding membership of entry `parent`.
    pub fn member_of_bits(parent: usize) -> u64 {
        ((parent as u64) + 1) << 48
    }
}

impl fmt::Debug for MapType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [(u64, &str); 15] = [
            (MapType::TO, "TO"),
            (MapType::FROM, "FROM"),
            (MapType::ALWAYS, "ALWAYS"),
            (MapType::DELETE, "DELETE"),
            (MapType::PTR_AND_OBJ, "PTR_AND_OBJ"),
            (MapType::TARGET_PARAM, "TARGET_PARAM"),
            (MapType::RETURN_PARAM, "RETURN_PARAM"),
            (MapType::PRIVATE, "PRIVATE"),
            (MapType::LITERAL, "LITERAL"),
            (MapType::IMPLICIT, "IMPLICIT"),
            (MapType::CLOSE, "CLOSE"),
            (MapType::PRESENT, "PRESENT"),
            (MapType::OMPX_HOLD, "OMPX_HOLD"),
            (MapType::ATTACH, "ATTACH"),
            (MapType::NON_CONTIG, "NON_CONTIG"),
        ];
        write!(f, "{:#x}", self.0)?;
        let mut sep = " (";
        for (bit, name) in NAMES {
            if self.0 & bit != 0 {
                write!(f, "{sep}{name}")?;
                sep = "|";
            }
        }
        if let Some(p) = self.member_of() {
            write!(f, "{sep}MEMBER_OF({p})")?;
            sep = "|";
        }
        if sep == "|" { write!(f, ")") } else { Ok(()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn member_of_roundtrip() {
        assert_eq!(MapType(0x1000000000003).member_of(), Some(0));
        assert_eq!(MapType(0x23).member_of(), None);
        assert_eq!(MapType::member_of_bits(0), 0x1_0000_0000_0000);
        assert_eq!(format!("{:?}", MapType(0x23)), "0x23 (TO|FROM|TARGET_PARAM)");
    }
}
