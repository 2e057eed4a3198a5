import Foundation

/// A fresh folder under the system's temporary folder for one test, removed
/// with everything in it when the value goes away.
final class TemporaryFolder: Sendable {
    let path: String

    init(function: String = #function) throws {
        let safe = function.filter { $0.isLetter || $0.isNumber }.prefix(24)
        path = NSTemporaryDirectory().appending("/documenttypes-\(safe)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The absolute path of `relative` inside the folder.
    func callAsFunction(_ relative: String) -> String { path + "/" + relative }

    /// Writes `bytes` to `relative` and returns its path.
    @discardableResult
    func write(_ bytes: [UInt8], to relative: String) throws -> String {
        let file = self(relative)
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return file
    }

    /// Writes `text` as UTF-8 to `relative` and returns its path.
    @discardableResult
    func write(_ text: String, to relative: String) throws -> String {
        try write(Array(text.utf8), to: relative)
    }
}
