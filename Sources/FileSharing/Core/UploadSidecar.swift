/// What a resumable upload's sidecar (`resumable-TOKEN.info` in the staging
/// folder) holds: `LENGTH COUNT OWNER`, `COUNT` lines of conditions, then
/// the target path (last: it may hold anything). Sidecars written before
/// owners were kept have `LENGTH` or `LENGTH COUNT` alone.
struct UploadSidecar: Sendable {
    var length: Int64
    var conditions: WritePreconditions
    /// Who started it; empty when not known.
    var owner: String
    var path: SharePath

    init(length: Int64, conditions: WritePreconditions, owner: String, path: SharePath) {
        self.length = length
        self.conditions = conditions
        self.owner = owner
        self.path = path
    }

    /// The sidecar's text.
    var text: String {
        let lines = conditions.lines
        return (["\(length) \(lines.count) \(owner)"] + lines + [path.description]).joined(separator: "\n")
    }

    /// Parses a sidecar's text; `nil` when it is damaged.
    init?(_ text: String) {
        let head = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        let fields = head[0].split(separator: " ")
        guard head.count == 2, fields.count <= 3, let lengthText = fields.first, let length = Int64(lengthText),
            let conditionCount = fields.count > 1 ? Int(fields[1]) : 0, conditionCount >= 0
        else { return nil }
        let rest = head[1].split(separator: "\n", maxSplits: conditionCount, omittingEmptySubsequences: false)
        guard rest.count == conditionCount + 1, let conditions = WritePreconditions(lines: rest.dropLast()),
            let path = try? SharePath(plain: String(rest[conditionCount]))
        else { return nil }
        self.length = length
        self.conditions = conditions
        self.owner = fields.count > 2 ? String(fields[2]) : ""
        self.path = path
    }
}
