extension UInt8 {
    /// The byte with an ASCII capital letter made small, any other byte as
    /// it is: for names compared on their bytes, in any case (field names,
    /// the `Basic` scheme, file name extensions).
    var lowercasedASCII: UInt8 {
        self >= UInt8(ascii: "A") && self <= UInt8(ascii: "Z") ? self | 0x20 : self
    }
}
