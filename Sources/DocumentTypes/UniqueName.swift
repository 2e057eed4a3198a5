/// Names that clash with nothing: `Report.pdf`, then `Report 2.pdf`,
/// `Report 3.pdf`… (a name that already ends in a number counts on from it,
/// and double extensions such as `.tar.gz` stay whole).
///
/// ```swift
/// let name = UniqueName.make(for: "Report.pdf") { exists(folder + "/" + $0) }
/// ```
public enum UniqueName {
    static let doubleExtensions = ["tar.gz", "tar.bz2", "tar.xz", "tar.zst"]

    /// Splits a name into its stem and its extension (with the dot).
    public static func split(_ name: String) -> (stem: String, extension: String) {
        let lower = name.lowercased()
        for double in doubleExtensions where lower.hasSuffix("." + double) && name.count > double.count + 1 {
            let cut = name.index(name.endIndex, offsetBy: -(double.count + 1))
            return (String(name[..<cut]), String(name[cut...]))
        }
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
        return (String(name[..<dot]), String(name[dot...]))
    }

    /// The first of `name`, `stem 2.ext`, `stem 3.ext`… for which `isTaken` is false.
    ///
    /// - Parameters:
    ///   - name: The name wanted.
    ///   - isTaken: Whether a candidate clashes with something.
    public static func make(for name: String, isTaken: (String) -> Bool) -> String {
        if !isTaken(name) { return name }
        var (stem, ext) = split(name)
        var number = 2
        // "Report 2.pdf" arriving where it exists becomes "Report 3.pdf".
        if let space = stem.lastIndex(of: " "), let value = Int(stem[stem.index(after: space)...]), value >= 1,
            value < 1_000_000
        {
            stem = String(stem[..<space])
            number = value + 1
        }
        while true {
            var candidate = "\(stem) \(number)\(ext)"
            if candidate.utf8.count > 255 {
                // Shortened so the number still fits in a name of 255 bytes.
                let room = 255 - " \(number)\(ext)".utf8.count
                var shortened = ""
                for character in stem {
                    if shortened.utf8.count + String(character).utf8.count > room { break }
                    shortened.append(character)
                }
                candidate = "\(shortened) \(number)\(ext)"
            }
            if !isTaken(candidate) { return candidate }
            number += 1
        }
    }
}
