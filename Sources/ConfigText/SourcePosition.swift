/// A place in a text file: a line and, where known, a column, both from 1.
/// Columns count characters (Unicode scalars), not bytes.
public struct SourcePosition: Hashable, Sendable, CustomStringConvertible {
    /// The line, from 1.
    public var line: Int
    /// The column, from 1, if known.
    public var column: Int?

    /// Creates a position.
    public init(line: Int, column: Int? = nil) {
        self.line = line
        self.column = column
    }

    public var description: String { column.map { "line \(line), column \($0)" } ?? "line \(line)" }
}
