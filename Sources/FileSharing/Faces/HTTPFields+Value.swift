import HTTPTypes

extension HTTPFields {
    /// The value of the fields named `name`, exactly as the subscript gives
    /// it (several joined with `, `, cookies with `; `), without the join
    /// when there is one field of that name.
    ///
    /// The subscript joins even a lone value through a lazy map, whose
    /// generic metadata is looked up at run time on every call: 2–3 % of a
    /// small GET that carries a header it looks at (credentials, a
    /// validator, a range). Absent fields cost the same either way.
    func value(of name: HTTPField.Name) -> String? {
        var found: String? = nil
        for field in self where field.name == name {
            // A second one: joined as the subscript joins them.
            if found != nil { return self[name] }
            found = field.value
        }
        return found
    }
}
