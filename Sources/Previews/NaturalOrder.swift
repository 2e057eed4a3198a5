/// Names in the order people number pages: runs of digits compare as
/// numbers ("page2" before "page10"), letters without regard to case.
enum NaturalOrder {
    /// Whether `a` comes before `b`.
    static func precedes(_ a: String, _ b: String) -> Bool {
        var left = Array(a.lowercased().unicodeScalars)[...]
        var right = Array(b.lowercased().unicodeScalars)[...]
        while let l = left.first, let r = right.first {
            if l.properties.numericType == .decimal, r.properties.numericType == .decimal,
                l.isASCII, r.isASCII
            {
                let leftDigits = left.prefix { $0.isASCII && $0.properties.numericType == .decimal }
                let rightDigits = right.prefix { $0.isASCII && $0.properties.numericType == .decimal }
                left = left.dropFirst(leftDigits.count)
                right = right.dropFirst(rightDigits.count)
                // Compared as numbers of any length: leading zeros dropped, then the longer is larger.
                let leftNumber = leftDigits.drop { $0 == "0" }
                let rightNumber = rightDigits.drop { $0 == "0" }
                if leftNumber.count != rightNumber.count { return leftNumber.count < rightNumber.count }
                if let difference = zip(leftNumber, rightNumber).first(where: { $0 != $1 }) {
                    return difference.0.value < difference.1.value
                }
                continue
            }
            if l != r { return l.value < r.value }
            left = left.dropFirst()
            right = right.dropFirst()
        }
        if left.isEmpty != right.isEmpty { return left.isEmpty }
        return a < b  // equal but for case or zeros: still a total order
    }
}
