public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension FileHandle {
    /// An existing file opened for writing, close-on-exec, or `nil` when it
    /// cannot be opened. Use it for every file a test writes in place.
    ///
    /// Foundation's `FileHandle(forWritingAtPath:)` (and `Data.write`) open
    /// without close-on-exec, and Foundation's `Process` closes in the child
    /// only the descriptors open when it prepared the launch: a file opened
    /// by another test a moment later stays open for writing in that program
    /// for as long as it runs. The observer and the documents then see a
    /// writer nobody is, and a test that expects a clean save or a finished
    /// copy fails now and then (CI saw it while a test started `fileshare
    /// serve` beside it).
    public static func closingOnExec(forWritingAtPath path: String) -> FileHandle? {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }
}
