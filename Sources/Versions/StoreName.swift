/// The names the version store and the trash give their entries: a
/// version and a trash id are the time they were made, in nanoseconds since
/// the epoch, as twenty decimal digits (so names sort as times do, and
/// anything else a client sends is recognised as no name at once, before the
/// disk is asked). Half-made entries carry ``temporaryPrefix``.
public enum StoreName {
    /// What the names of half-made entries start with (dropped on start).
    public static let temporaryPrefix = ".tmp-"
    /// The number of digits of a name.
    public static let digits = 20

    /// The name of an entry made at `nanoseconds`.
    public static func make(nanoseconds: Int64) -> String {
        let text = String(max(0, nanoseconds))
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// The time a name says, or `nil` when `name` is not one of the store's.
    public static func time(of name: String) -> Int64? {
        let utf8 = name.utf8
        guard utf8.count == digits, utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int64(name)
    }

    /// Whether `name` is one of the store's names.
    public static func isValid(_ name: String) -> Bool { time(of: name) != nil }

    /// The first name at or after `nanoseconds` that `taken` does not hold.
    public static func free(at nanoseconds: Int64, taken: (String) -> Bool) -> String {
        var time = nanoseconds
        while taken(make(nanoseconds: time)) { time += 1 }
        return make(nanoseconds: time)
    }
}
