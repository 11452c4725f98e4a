//! The IPv4 ECN field as its 2-bit value in RFC 3168 numbering. Schemes give the four values
//! their own meaning through named mappings in their folders, never by scattered bit tests.

/// The 2-bit ECN field. `0b00` Not-ECT, `0b01` ECT(1), `0b10` ECT(0), `0b11` CE.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Ecn(pub u8);

impl Ecn {
    pub const NOT_ECT: Ecn = Ecn(0b00);
    pub const ECT1: Ecn = Ecn(0b01);
    pub const ECT0: Ecn = Ecn(0b10);
    pub const CE: Ecn = Ecn(0b11);

    #[inline]
    pub fn bits(self) -> u8 {
        self.0 & 0b11
    }
    /// ECN-capable transport: any codepoint but Not-ECT (RFC 3168 §5).
    #[inline]
    pub fn is_ect(self) -> bool {
        self.bits() != 0
    }
    pub fn name(self) -> &'static str {
        match self.bits() {
            0 => "not-ect",
            1 => "ect1",
            2 => "ect0",
            _ => "ce",
        }
    }
}
